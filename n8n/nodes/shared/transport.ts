/**
 * HTTP to the Stageline external API for the Stageline nodes (issue 18): the credential's key and base URL, JSON
 * bodies, error responses as NodeApiError (problem detail and each failing field, what to do per status), and
 * list paging through `Link: <...>; rel="next"` (CONTRACT "Lists").
 */
import {
	NodeApiError,
	NodeOperationError,
	sleep,
	type IDataObject,
	type IExecuteFunctions,
	type IHookFunctions,
	type IHttpRequestMethods,
	type IHttpRequestOptions,
	type ILoadOptionsFunctions,
	type IN8nHttpFullResponse,
	type IPollFunctions,
	type IWebhookFunctions,
	type JsonObject,
} from 'n8n-workflow';
import { OAUTH2_CREDENTIAL, credentialTypeOf } from './authentication';
import { describeProblem, REQUEST_ID_HEADER } from './problem';
import { resolveApiUrl, serverBaseUrl } from './server-url';

/** CONTRACT "Idempotency": the request header of a retry-safe create. */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

/** CONTRACT "Lists": largest page size a list accepts. */
export const MAX_PAGE_LIMIT = 500;

/** The node contexts that may call the API. */
export type StagelineContext = IExecuteFunctions | ILoadOptionsFunctions | IHookFunctions | IWebhookFunctions | IPollFunctions;

/** One API call. */
export interface ApiRequest {
	method?: IHttpRequestMethods;
	/** A path from `apiPath` (`/v1/ext/...`) or a `Link` URL from an earlier response. */
	url: string;
	qs?: IDataObject;
	body?: IDataObject;
	headers?: Record<string, string>;
	/** The input item this call is for (errors then name it). */
	itemIndex?: number;
}

/** A response: status, headers (lower-case names) and parsed body. */
export interface ApiResponse<T> {
	status: number;
	headers: Record<string, string>;
	body: T;
}

/** Drops undefined, null and empty-string members (n8n leaves empty optional parameters as ''). */
export function compact(values: IDataObject): IDataObject {
	const out: IDataObject = {};
	for (const [key, value] of Object.entries(values)) {
		if (value !== undefined && value !== null && value !== '') out[key] = value;
	}
	return out;
}

/** Lower-cased header names, array values joined with ", ". */
function headersOf(raw: IN8nHttpFullResponse['headers'] | undefined): Record<string, string> {
	const out: Record<string, string> = {};
	for (const [name, value] of Object.entries(raw ?? {})) {
		if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
	}
	return out;
}

/** The body as JSON when it is a JSON text (n8n hands non-JSON and error bodies over as text or a Buffer). */
function parseBody(body: unknown): unknown {
	const text = Buffer.isBuffer(body) ? body.toString('utf8') : body;
	if (typeof text !== 'string') return text;
	try {
		return JSON.parse(text);
	} catch {
		return text;
	}
}

/**
 * Whether an answer refuses the access token itself: 401 with `WWW-Authenticate: Bearer ... error="invalid_token"`
 * (RFC 6750 3.1: expired or revoked). n8n refreshes an OAuth2 token only when a request throws, and these requests
 * do not throw on HTTP errors, so `apiRequest` asks n8n to refresh it (`helpers.refreshOAuth2Token`) and sends again once.
 */
export function refusesAccessToken(status: number, headers: Record<string, string>): boolean {
	const challenge = headers['www-authenticate'] ?? '';
	return status === 401 && /\bBearer\b/i.test(challenge) && /\berror\s*=\s*"?invalid_token"?/i.test(challenge);
}

/** CONTRACT "Scopes and limits": the longest `Retry-After` (seconds) a request waits out once before failing with a 429. */
export const MAX_RETRY_AFTER_SECONDS = 60;

/** The `Retry-After` header as whole seconds (delta-seconds form only), or undefined. */
export function retryAfterSeconds(header: string | undefined): number | undefined {
	if (header === undefined || !/^\s*\d+\s*$/.test(header)) return undefined;
	return Number(header);
}

/**
 * One HTTP exchange through n8n's `httpRequestWithAuthentication` (status errors are not thrown: the caller reads them).
 * @throws NodeApiError "Could not reach Stageline at <base>: ..." for network failures (refused, DNS, timeout),
 *   with the item index (set on n8n's own NodeApiError, which re-wrapping hands back unchanged).
 */
async function send(context: StagelineContext, credentialType: string, options: IHttpRequestOptions, base: string, itemIndex: number | undefined): Promise<IN8nHttpFullResponse> {
	try {
		return (await context.helpers.httpRequestWithAuthentication.call(context, credentialType, options)) as IN8nHttpFullResponse;
	} catch (error) {
		const message = `Could not reach Stageline at ${base}: ${(error as Error).message}`;
		const description = `Check the Base URL of the ${credentialType === OAUTH2_CREDENTIAL ? 'Stageline OAuth2 API' : 'Stageline API'} credential and that the server is running.`;
		const wrapped = new NodeApiError(context.getNode(), error as JsonObject, { message, description, itemIndex });
		// n8n hands network failures over as a NodeApiError already, and re-wrapping returns that one unchanged
		wrapped.message = message;
		wrapped.description = description;
		if (itemIndex !== undefined) wrapped.context.itemIndex = itemIndex;
		throw wrapped;
	}
}

/**
 * Sends one request with the node's credential (`stagelineApi`, or `stageLineOAuth2Api` when Authentication is
 * OAuth2: authentication.ts) and returns the whole response.
 * @throws NodeOperationError when the credential's Base URL breaks the rule (server-url.ts); NodeApiError for any
 *   response with status >= 400 (message: what to do; description: the problem's detail and failing fields) and
 *   for network failures. With the OAuth2 credential, a 401 `invalid_token` refreshes the token and sends once more
 *   (`refusesAccessToken`). A 429 with `Retry-After` of at most MAX_RETRY_AFTER_SECONDS is waited out and sent once
 *   more (n8n's Retry On Fail waits at most 5 s, less than a rate-limit window); a second 429 is thrown.
 */
export async function apiRequest<T>(context: StagelineContext, request: ApiRequest): Promise<ApiResponse<T>> {
	const credentialType = credentialTypeOf(context);
	const credentials = await context.getCredentials(credentialType);
	let base: string;
	let url: string;
	try {
		base = serverBaseUrl(credentials.baseUrl);
		url = resolveApiUrl(base, request.url);
	} catch (error) {
		throw new NodeOperationError(context.getNode(), (error as Error).message, { itemIndex: request.itemIndex });
	}
	const options: IHttpRequestOptions = {
		method: request.method ?? 'GET',
		url,
		headers: { accept: 'application/json', ...request.headers },
		returnFullResponse: true,
		ignoreHttpStatusErrors: true,
		json: true,
	};
	if (request.qs && Object.keys(request.qs).length > 0) options.qs = request.qs;
	if (request.body !== undefined) options.body = request.body;
	let response = await send(context, credentialType, options, base, request.itemIndex);
	let headers = headersOf(response.headers);
	if (credentialType === OAUTH2_CREDENTIAL && refusesAccessToken(response.statusCode, headers)) {
		// n8n renews the token with the refresh token and stores it (a revoked grant: "needs to be reconnected")
		await context.helpers.refreshOAuth2Token.call(context, credentialType);
		response = await send(context, credentialType, options, base, request.itemIndex);
		headers = headersOf(response.headers);
	}
	const retryAfter = retryAfterSeconds(headers['retry-after']);
	if (response.statusCode === 429 && retryAfter !== undefined && retryAfter <= MAX_RETRY_AFTER_SECONDS) {
		await sleep(retryAfter * 1000);
		response = await send(context, credentialType, options, base, request.itemIndex);
		headers = headersOf(response.headers);
	}
	const body = parseBody(response.body);
	if (response.statusCode >= 400) {
		throw problemError(context, response.statusCode, body, request.itemIndex, { retryAfter: retryAfterSeconds(headers['retry-after']), requestId: headers[REQUEST_ID_HEADER] });
	}
	return { status: response.statusCode, headers, body: body as T };
}

/** What an error answer's headers add to its NodeApiError. */
export interface AnswerHeaders {
	/** `Retry-After` of a 429, in seconds. */
	retryAfter?: number;
	/** The `Request-Id` header (of the batch request, for one operation's result). */
	requestId?: string;
}

/**
 * The NodeApiError of an error answer (an HTTP response, or one operation's result in a batch, CONTRACT "Batch
 * writes"): message what to do, ending with ` (request <id>)` (the body's `request_id`, else `headers.requestId`;
 * CONTRACT "Request ids and the request log"), description the problem's detail and failing fields (problem.ts),
 * `httpCode` the status.
 * @param body the problem (parsed JSON) or the text the server answered.
 * @param itemIndex the input item the answer is about (n8n then names it).
 */
export function problemError(context: StagelineContext, status: number, body: unknown, itemIndex?: number, headers: AnswerHeaders = {}): NodeApiError {
	const described = describeProblem(status, body, headers.retryAfter, headers.requestId);
	const errorBody: JsonObject = body !== null && typeof body === 'object' ? (body as JsonObject) : { detail: String(body ?? '') };
	return new NodeApiError(context.getNode(), errorBody, {
		message: described.message,
		description: described.description,
		httpCode: String(described.status),
		itemIndex,
	});
}

/** The response body of one request (see `apiRequest`). */
export async function apiJson<T>(context: StagelineContext, request: ApiRequest): Promise<T> {
	return (await apiRequest<T>(context, request)).body;
}

/** The `rel="next"` URL of an RFC 8288 `Link` header, or null. */
export function nextLink(header: string | undefined): string | null {
	if (!header) return null;
	for (const part of header.split(',')) {
		const match = /^\s*<([^>]*)>\s*;(.*)$/.exec(part);
		if (match && /\brel\s*=\s*"?next"?/i.test(match[2] ?? '')) return match[1] ?? null;
	}
	return null;
}

/** One page of a list and where the next one is. */
export interface ListPage<T> {
	results: T[];
	/** The `Link: rel="next"` URL, or null after the last page. */
	next: string | null;
}

/**
 * One page of a list endpoint: `url` with `qs`, or a `next` URL from an earlier page as it is (the cursor is opaque).
 * @throws as `apiRequest`; NodeApiError when the body is not a list.
 */
export async function listPage<T>(context: StagelineContext, request: ApiRequest): Promise<ListPage<T>> {
	const response = await apiRequest<T[]>(context, request);
	if (!Array.isArray(response.body)) {
		throw new NodeApiError(context.getNode(), { body: String(response.body) }, {
			message: `Stageline answered ${request.url} with something other than a list.`,
			itemIndex: request.itemIndex,
		});
	}
	return { results: response.body, next: nextLink(response.headers.link) };
}

/** `url` (a path or absolute URL with a query) with its `limit` query parameter set to `limit`. */
export function withLimit(url: string, limit: number): string {
	const parsed = new URL(url, 'http://placeholder.invalid');
	parsed.searchParams.set('limit', String(limit));
	return url.startsWith('/') ? `${parsed.pathname}${parsed.search}` : parsed.toString();
}

/**
 * Up to `max` entries of a list (every entry when `max` is undefined), following `Link: rel="next"` page by page.
 * Each page asks for `min(remaining, 500)` entries: the next URL's `limit` is rewritten (the cursor stays as sent).
 */
export async function listAll<T>(context: StagelineContext, request: ApiRequest, max?: number): Promise<T[]> {
	const out: T[] = [];
	const pageLimit = () => Math.min(max === undefined ? MAX_PAGE_LIMIT : max - out.length, MAX_PAGE_LIMIT);
	let page: ListPage<T> = await listPage<T>(context, { ...request, qs: { ...request.qs, limit: pageLimit() } });
	out.push(...page.results);
	while (page.next !== null && (max === undefined || out.length < max)) {
		const url = withLimit(page.next, pageLimit()); // the next URL carries the whole query
		page = await listPage<T>(context, { ...request, url, qs: undefined });
		out.push(...page.results);
	}
	return max === undefined ? out : out.slice(0, max);
}
