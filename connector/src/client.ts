/**
 * Small typed helpers around `z.request` for the Stageline external API (spec "Endpoints"; CONTRACT "Lists").
 *
 * Operations pass paths relative to the server (`/v1/ext/...`, built with `apiPath`); the `beforeRequest`
 * middleware (middleware.ts) resolves them against the connection's Server URL and adds the API key.
 */
import type { HttpRequestOptions, HttpResponse, ZObject } from 'zapier-platform-core';
import { API_BASE_PATH, IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER, LINK_HEADER, REQUEST_ID_HEADER, type CustomField, type Item } from '@stageline/shared';
import { requestIdOf, type ProblemContext } from './problem-messages';

/** The hosted Stageline API. Connections that leave "Server URL" empty use it; self-hosted installs override it. */
export const DEFAULT_SERVER_URL = 'https://api.stageline.dev';

/** At most this many pages are followed when a lookup list (pipelines, stages, statuses) is paginated. */
const MAX_LOOKUP_PAGES = 10;

/** Host names of this machine: the only hosts a Server URL may name with plain `http://` (local development). */
const LOOPBACK_HOST = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

/**
 * The base URL of a connection's Stageline server: `authData.server_url` when set, else DEFAULT_SERVER_URL.
 * Forgiving about what users paste: surrounding spaces and trailing slashes are dropped, a missing scheme becomes
 * `https://`, and a trailing `/v1/ext` (the API prefix) is removed because every request adds it. Strict about
 * where the API key may go (integration check D026): only `https://` (plain `http://` only for this machine, e.g.
 * `http://localhost:3000` in development, since the key would otherwise cross the network in clear text), no user
 * name or password, no query string or fragment.
 * @throws Error with a message for the user when the value breaks one of these rules.
 */
export function serverUrlOf(authData: Readonly<Record<string, unknown>> | undefined): string {
  const raw = typeof authData?.server_url === 'string' ? authData.server_url.trim() : '';
  if (raw === '') return DEFAULT_SERVER_URL;
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `https://${raw}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    // never echo the input: a key pasted into the wrong field, or a password, would land in Zapier's task history
    throw new Error('Server URL is not a valid URL. Use the address of your Stageline server, e.g. https://stageline.example.com');
  }
  if (url.username !== '' || url.password !== '') {
    throw new Error('Server URL must not contain a user name or password: enter only the address, and the API key in its own field.');
  }
  const shown = `${url.protocol}//${url.host}`; // scheme, host and port only (user info is refused above)
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK_HOST.test(url.hostname))) {
    throw new Error(`Server URL ${shown} must start with https:// (plain http:// is only accepted for localhost).`);
  }
  if (url.search !== '' || url.hash !== '') {
    throw new Error(`Server URL ${shown} must not contain a query string or fragment: enter only the address of your server.`);
  }
  let base = `${url.origin}${url.pathname}`.replace(/\/+$/, '');
  if (base.endsWith(API_BASE_PATH)) base = base.slice(0, -API_BASE_PATH.length);
  return base;
}

/**
 * Resolves a request URL against the server base: a path (`/v1/ext/items`) is appended to the base; an absolute
 * URL under the API prefix (e.g. a `Link: rel="next"` URL the server built from its own host name) is rebased onto
 * the configured server, so the key is never sent elsewhere and proxies that rewrite hosts keep working.
 * Other absolute URLs are returned unchanged.
 */
export function resolveUrl(base: string, url: string): string {
  if (url.startsWith('/')) return `${base}${url}`;
  if (/^https?:\/\//i.test(url)) {
    const parsed = new URL(url);
    const apiIndex = parsed.pathname.indexOf(`${API_BASE_PATH}/`);
    if (apiIndex >= 0) return `${base}${parsed.pathname.slice(apiIndex)}${parsed.search}`;
    return url;
  }
  return `${base}/${url}`;
}

/** `/v1/ext/<segment>/<segment>...` with every segment percent-encoded (ids come from users and mapped data). */
export function apiPath(...segments: string[]): string {
  return `${API_BASE_PATH}/${segments.map((s) => encodeURIComponent(s)).join('/')}`;
}

/** Options of one API call. */
export interface ApiCall {
  method?: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** A path from `apiPath` (or a `Link` URL). */
  url: string;
  params?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** Let the caller handle 4xx/5xx itself (the error middleware and core then leave the response alone). */
  skipThrowForStatus?: boolean;
  /** Extra request headers (e.g. `Idempotency-Key`). */
  headers?: Record<string, string>;
}

/** Sends one API request; without `skipThrowForStatus`, error statuses become user-facing errors in middleware.ts. */
export function callApi<T>(z: ZObject, call: ApiCall): Promise<HttpResponse<T>> {
  const params: Record<string, string> = {};
  for (const [key, value] of Object.entries(call.params ?? {})) {
    if (value !== undefined) params[key] = String(value);
  }
  const options: HttpRequestOptions & { url: string } = {
    url: call.url,
    method: call.method ?? 'GET',
    headers: { accept: 'application/json', ...call.headers },
    params,
    skipThrowForStatus: call.skipThrowForStatus ?? false,
  };
  if (call.body !== undefined) options.json = call.body;
  return z.request<T>(options);
}

/** GET a JSON body. Errors are thrown by the middleware. */
export async function getJson<T>(z: ZObject, url: string, params?: ApiCall['params']): Promise<T> {
  return (await callApi<T>(z, { url, params })).data;
}

/** POST/PATCH a JSON body and return the JSON response. */
export async function sendJson<T>(z: ZObject, method: 'POST' | 'PATCH', url: string, body: unknown): Promise<T> {
  return (await callApi<T>(z, { method, url, body })).data;
}

/**
 * POST a create with its `Idempotency-Key` (CONTRACT "Idempotency"; the key comes from idempotency.ts) and return the
 * JSON response. A replayed response (`Idempotent-Replayed: true`, same status and body as the first) is returned
 * exactly like the original, so the Zap gets the same output; error statuses are thrown by middleware.ts.
 */
export async function createJson<T>(z: ZObject, url: string, body: unknown, idempotencyKey: string): Promise<T> {
  return (await postWithKey<T>(z, url, body, idempotencyKey)).data;
}

/** POST a JSON body with its `Idempotency-Key` and return the whole response (for its headers); see `createJson`. */
export function postWithKey<T>(z: ZObject, url: string, body: unknown, idempotencyKey: string): Promise<HttpResponse<T>> {
  return callApi<T>(z, { method: 'POST', url, body, headers: { [IDEMPOTENCY_KEY_HEADER]: idempotencyKey } });
}

/** Whether `response` is a replay of an earlier request with the same Idempotency-Key (`Idempotent-Replayed: true`). */
export function isReplayed(response: Pick<HttpResponse, 'getHeader'>): boolean {
  return response.getHeader(IDEMPOTENT_REPLAYED_HEADER)?.trim().toLowerCase() === 'true';
}

/** What problem-messages.ts reads of an error response's headers: whether it was replayed, its `Request-Id`. */
export function problemContextOf(response: Pick<HttpResponse, 'getHeader'>): ProblemContext {
  return { replayed: isReplayed(response), requestId: response.getHeader(REQUEST_ID_HEADER) };
}

/** The id of the request `response` answered: its body's `request_id`, else its `Request-Id` header (or undefined). */
export function responseRequestId(response: Pick<HttpResponse, 'data' | 'getHeader'>): string | undefined {
  return requestIdOf(response.data, response.getHeader(REQUEST_ID_HEADER));
}

/** The `rel="next"` URL of an RFC 8288 `Link` header, or null. */
export function nextLink(header: string | undefined | null): string | null {
  if (!header) return null;
  for (const part of header.split(',')) {
    const match = /^\s*<([^>]*)>\s*;(.*)$/.exec(part);
    if (match && /\brel\s*=\s*"?next"?/i.test(match[2] ?? '')) return match[1] ?? null;
  }
  return null;
}

/**
 * GET a list endpoint and follow `Link: rel="next"` (CONTRACT "Lists") for up to MAX_LOOKUP_PAGES pages.
 * For small lookup lists (pipelines, stages, statuses) that dropdowns show in full.
 */
export async function getAllPages<T>(z: ZObject, url: string, params?: ApiCall['params']): Promise<T[]> {
  const out: T[] = [];
  let next: string | null = url;
  let query = params;
  for (let page = 0; next !== null && page < MAX_LOOKUP_PAGES; page += 1) {
    const response: HttpResponse<T[]> = await callApi<T[]>(z, { url: next, params: query });
    if (!Array.isArray(response.data)) {
      throw new z.errors.Error(`Stageline answered ${next} with something other than a list.`, 'UnexpectedResponse', response.status);
    }
    out.push(...response.data);
    next = nextLink(response.getHeader(LINK_HEADER));
    query = undefined; // the next URL carries the whole query
  }
  return out;
}

/** Items or tasks per page of a picker dropdown (Zapier shows a page, then "Load more"). */
export const PICKER_PAGE_SIZE = 100;

/**
 * One page of a list endpoint for a dropdown that Zapier pages (`canPaginate: true` on the hidden trigger):
 * Zapier calls the trigger with `bundle.meta.page` 0, 1, 2...; page 0 requests `url` with `params` and `limit`
 * PICKER_PAGE_SIZE, and every page stores the `Link: rel="next"` URL with `z.cursor.set` (an empty string after
 * the last page), which the next page requests as it is (CONTRACT "Lists": keyset pagination, the cursor is
 * opaque). A page after the last one is empty, which ends Zapier's paging.
 * @throws the errors of middleware.ts for error responses; z.errors.Error when the body is not a list.
 */
export async function getPickerPage<T>(
  z: ZObject,
  bundle: { meta?: { page?: number } },
  url: string,
  params: ApiCall['params'] = {},
): Promise<T[]> {
  const page = bundle.meta?.page ?? 0;
  let call: ApiCall = { url, params: { ...params, limit: PICKER_PAGE_SIZE } };
  if (page > 0) {
    const next = await z.cursor.get();
    if (!next) return [];
    call = { url: next };
  }
  const response = await callApi<T[]>(z, call);
  if (!Array.isArray(response.data)) {
    throw new z.errors.Error(`Stageline answered ${call.url} with something other than a list.`, 'UnexpectedResponse', response.status);
  }
  await z.cursor.set(nextLink(response.getHeader(LINK_HEADER)) ?? '');
  return response.data;
}

/** GET /v1/ext/pipelines/{pipeline_id}/fields: the custom fields of a pipeline's blueprint. */
export function fetchCustomFields(z: ZObject, pipelineId: string): Promise<CustomField[]> {
  return getJson<CustomField[]>(z, apiPath('pipelines', pipelineId, 'fields'));
}

/** An Item with Zapier's dedupe key: `id` equals `item_id` (one "new item" per item). */
export type ZapierItem<T extends Item = Item> = T & { id: string };

/** Adds `id` = `item_id` to an item (Zapier de-duplicates trigger and search results on `id`). */
export function withItemId<T extends Item>(item: T): ZapierItem<T> {
  return { id: item.item_id, ...item };
}
