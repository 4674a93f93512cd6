/**
 * HTTP to the Stageline external API for the Stageline nodes (issue 18): the credential's key and base URL, JSON
 * bodies, error responses as NodeApiError (problem detail and each failing field, what to do per status), and
 * list paging through `Link: <...>; rel="next"` (CONTRACT "Lists").
 */
import {
	NodeApiError,
	NodeOperationError,
	type IDataObject,
	type IExecuteFunctions,
	type IHookFunctions,
	type IHttpRequestMethods,
	type IHttpRequestOptions,
	type ILoadOptionsFunctions,
	type IN8nHttpFullResponse,
	type IWebhookFunctions,
	type JsonObject,
} from 'n8n-workflow';
import { describeProblem } from './problem';
import { resolveApiUrl, serverBaseUrl } from './server-url';

/** The credential type every Stageline node uses. */
export const CREDENTIAL_TYPE = 'stagelineApi';

/** CONTRACT "Idempotency": the request header of a retry-safe create. */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

/** CONTRACT "Lists": largest page size a list accepts. */
export const MAX_PAGE_LIMIT = 500;

/** The node contexts that may call the API. */
export type StagelineContext = IExecuteFunctions | ILoadOptionsFunctions | IHookFunctions | IWebhookFunctions;

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
 * Sends one request with the `stagelineApi` credential and returns the whole response.
 * @throws NodeOperationError when the credential's Base URL breaks the rule (server-url.ts); NodeApiError for any
 *   response with status >= 400 (message: what to do; description: the problem's detail and failing fields) and
 *   for network failures.
 */
export async function apiRequest<T>(context: StagelineContext, request: ApiRequest): Promise<ApiResponse<T>> {
	const credentials = await context.getCredentials(CREDENTIAL_TYPE);
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
	let response: IN8nHttpFullResponse;
	try {
		response = (await context.helpers.httpRequestWithAuthentication.call(context, CREDENTIAL_TYPE, options)) as IN8nHttpFullResponse;
	} catch (error) {
		throw new NodeApiError(context.getNode(), error as JsonObject, {
			message: `Could not reach Stageline at ${base}: ${(error as Error).message}`,
			description: 'Check the Base URL of the Stageline API credential and that the server is running.',
			itemIndex: request.itemIndex,
		});
	}
	const headers = headersOf(response.headers);
	const body = parseBody(response.body);
	if (response.statusCode >= 400) {
		const retryAfter = Number(headers['retry-after']);
		const described = describeProblem(response.statusCode, body, Number.isFinite(retryAfter) ? retryAfter : undefined);
		const errorBody: JsonObject = body !== null && typeof body === 'object' ? (body as JsonObject) : { detail: String(body ?? '') };
		throw new NodeApiError(context.getNode(), errorBody, {
			message: described.message,
			description: described.description,
			httpCode: String(described.status),
			itemIndex: request.itemIndex,
		});
	}
	return { status: response.statusCode, headers, body: body as T };
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

/**
 * Up to `max` entries of a list (every entry when `max` is undefined), following `Link: rel="next"` page by page.
 * Pages ask for `min(remaining, 500)` entries.
 */
export async function listAll<T>(context: StagelineContext, request: ApiRequest, max?: number): Promise<T[]> {
	const out: T[] = [];
	let next: string | null = request.url;
	let qs: IDataObject | undefined = { ...request.qs, limit: Math.min(max ?? MAX_PAGE_LIMIT, MAX_PAGE_LIMIT) };
	while (next !== null && (max === undefined || out.length < max)) {
		const page: ListPage<T> = await listPage<T>(context, { ...request, url: next, qs });
		out.push(...page.results);
		next = page.next;
		qs = undefined; // the next URL carries the whole query
	}
	return max === undefined ? out : out.slice(0, max);
}
