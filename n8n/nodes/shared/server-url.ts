/**
 * The Stageline server's base URL from the credential's Base URL (issue 18: validated like the Zapier connector's
 * Server URL, connector/src/client.ts `serverUrlOf`). n8n packages have no runtime dependencies, so the rule lives
 * here; test/server-url.test.ts checks both agree.
 */

/** Spec "Versioning": every external path starts with this prefix (`API_BASE_PATH` of @stageline/shared). */
export const API_BASE_PATH = '/v1/ext';

/** Host names of this machine: the only hosts a Base URL may name with plain `http://` (local development). */
const LOOPBACK_HOST = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

/**
 * The base URL without trailing slashes or a trailing `/v1/ext` (every request adds it). Forgiving about what users
 * paste (spaces, a missing scheme becomes `https://`), strict about where the key may go: `https://` only (plain
 * `http://` for localhost), no user name or password, no query string or fragment.
 * @param raw the credential's `baseUrl`.
 * @returns e.g. `https://stageline.example.com`.
 * @throws Error with a message saying what to enter; messages show at most the origin (scheme, host, port), never the
 *   raw input (it may carry a password or a pasted key).
 */
export function serverBaseUrl(raw: unknown): string {
	const text = typeof raw === 'string' ? raw.trim() : '';
	if (text === '') throw new Error('Base URL is empty: enter the address of your Stageline server in the Stageline API credential.');
	const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `https://${text}`;
	// User info first, and never the raw text in a message: it may hold a password or a pasted key.
	if (/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(withScheme)) {
		throw new Error('Base URL must not contain a user name or password: enter only the address, and the API key in its own field.');
	}
	if (!URL.canParse(withScheme)) {
		throw new Error('Base URL is not a valid URL. Use the address of your Stageline server, e.g. https://stageline.example.com');
	}
	const url = new URL(withScheme);
	if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK_HOST.test(url.hostname))) {
		throw new Error(`Base URL ${url.protocol}//${url.host} must start with https:// (plain http:// is only accepted for localhost).`);
	}
	if (url.search !== '' || url.hash !== '') {
		throw new Error(`Base URL ${url.protocol}//${url.host} must not contain a query string or fragment: enter only the address of your server.`);
	}
	let base = `${url.origin}${url.pathname}`.replace(/\/+$/, '');
	if (base.endsWith(API_BASE_PATH)) base = base.slice(0, -API_BASE_PATH.length);
	return base;
}

/**
 * Resolves a request URL against the base: a path is appended; an absolute URL under the API prefix (a
 * `Link: rel="next"` URL the server built from its own host name) is rebased onto the base, so the key never goes
 * elsewhere. Any other absolute URL is refused.
 * @throws Error for an absolute URL outside the API.
 */
export function resolveApiUrl(base: string, url: string): string {
	if (url.startsWith('/')) return `${base}${url}`;
	const parsed = new URL(url);
	const apiIndex = parsed.pathname.indexOf(`${API_BASE_PATH}/`);
	if (apiIndex < 0) throw new Error(`Stageline sent a link outside its API (${url}); it was not followed.`);
	return `${base}${parsed.pathname.slice(apiIndex)}${parsed.search}`;
}

/** `/v1/ext/<segment>/...` with every segment percent-encoded (ids come from users and mapped data). */
export function apiPath(...segments: string[]): string {
	return `${API_BASE_PATH}/${segments.map((s) => encodeURIComponent(s)).join('/')}`;
}
