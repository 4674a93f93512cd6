/**
 * Stageline error responses (RFC 9457 problem details, CONTRACT "Errors") as messages a workflow owner can act on.
 * Modelled on the Zapier connector's (connector/src/problem-messages.ts), worded for n8n. Pure: unit tested by status.
 */
import type { Problem, ProblemFieldError } from '@stageline/shared';

/** Where users manage API keys (spec "Authentication"; the console's API keys page). */
export const API_KEYS_LOCATION = 'Company Settings → API Keys';

/** Hours Stageline keeps an Idempotency-Key and its answer (CONTRACT "Idempotency": IDEMPOTENCY_KEY_TTL_SECONDS / 3600). */
export const IDEMPOTENCY_KEY_TTL_HOURS = 24;

/**
 * CONTRACT "Request ids and the request log": the response header naming the request (`REQUEST_ID_HEADER` of
 * @stageline/shared), lower case as transport.ts keeps header names.
 */
export const REQUEST_ID_HEADER = 'request-id';

/** A user-facing error: a one-line message, the details (problem detail and failing fields), the HTTP status. */
export interface DescribedProblem {
	/** What to do, ending with ` (request <id>)` when the request's id is known. */
	message: string;
	description: string;
	status: number;
	/** The problem's `code` (CONTRACT "Errors"), or `http_<status>` when the body had none. */
	code: string;
	/** The id of the request (the body's `request_id`, else the `Request-Id` header), when known. */
	requestId?: string;
}

/** `value` when it can be shown as a request id (1..100 visible ASCII characters: not trusted from the network). */
function asRequestId(value: unknown): string | undefined {
	return typeof value === 'string' && value.length <= 100 && /^[\x21-\x7E]+$/.test(value) ? value : undefined;
}

/**
 * The id of the request an error answered, to paste into the console's Requests search: the problem body's
 * `request_id`, else the `Request-Id` header; undefined when neither is one (a proxy's own error page).
 */
export function requestIdOf(body: unknown, header: string | undefined): string | undefined {
	const fromBody = body !== null && typeof body === 'object' ? (body as { request_id?: unknown }).request_id : undefined;
	return asRequestId(fromBody) ?? asRequestId(header);
}

/** Reads the parts of a problem body this module uses; tolerates partial bodies (a proxy's error page). */
function readProblem(body: unknown): Partial<Problem> {
	if (body === null || typeof body !== 'object') return {};
	const loose = body as Record<string, unknown>;
	const out: Partial<Problem> = {};
	if (typeof loose.code === 'string') out.code = loose.code as Problem['code'];
	if (typeof loose.detail === 'string') out.detail = loose.detail;
	if (typeof loose.title === 'string') out.title = loose.title;
	if (typeof loose.current_version === 'number') out.current_version = loose.current_version;
	if (Array.isArray(loose.matches)) out.matches = loose.matches.filter((m): m is string => typeof m === 'string');
	if (Array.isArray(loose.errors)) {
		out.errors = loose.errors.filter(
			(e): e is ProblemFieldError => e !== null && typeof e === 'object' && typeof (e as ProblemFieldError).message === 'string',
		);
	}
	return out;
}

/** "path: message" per failing field, one per line; the path is left out when the message names it already. */
export function formatFieldErrors(errors: readonly ProblemFieldError[] | undefined): string {
	if (!errors || errors.length === 0) return '';
	const lines = errors.map((e) => {
		const path = typeof e.path === 'string' ? e.path : '';
		return path === '' || e.message.includes(path) ? e.message : `${path}: ${e.message}`;
	});
	return [...new Set(lines)].map((line) => `- ${line}`).join('\n');
}

/** Non-empty parts joined by a space (sentences) or a new line (field lists). */
function join(...parts: string[]): string {
	return parts
		.filter((p) => p.trim() !== '')
		.reduce((out, part) => (out === '' ? part : `${out}${part.startsWith('- ') || out.includes('\n- ') ? '\n' : ' '}${part}`), '');
}

/** What to do, by problem code first (idempotency, upsert, archived pipeline) and then by status. */
function advice(status: number, problem: Partial<Problem>): string {
	switch (problem.code) {
		case 'idempotency_key_in_use':
			return 'Stageline is still working on an earlier attempt of this step for the same item. Retry in a few seconds (Retry On Fail does): you then get that attempt\'s result, nothing is created twice.';
		case 'idempotency_key_reused':
			return `This execution already sent a different request with the same Idempotency-Key within the last ${IDEMPOTENCY_KEY_TTL_HOURS} hours. Run the workflow again (a new execution sends new keys).`;
		case 'ambiguous_match':
			return "Several items match this one under the pipeline's duplicate rules, so Stageline did not know which to update and changed nothing. Merge or delete the duplicates in Stageline, or pick the item yourself (Find, then Update).";
		case 'upsert_unavailable':
			return "Stageline cannot tell whether this item exists already. Fill the custom fields the pipeline's duplicate detection compares (e.g. its email field), or ask an owner or admin to turn on duplicate detection for the pipeline; otherwise use Create.";
		case 'pipeline_archived':
			return 'The pipeline is archived in Stageline, so no item can be created in it. Choose another pipeline, or ask an owner or admin to restore it.';
		default:
	}
	switch (status) {
		case 400:
			return 'Stageline rejected the request because some values are not valid.';
		case 401:
			return `Stageline did not accept the API key (it is missing, wrong, revoked or expired). Create a new key in Stageline under ${API_KEYS_LOCATION}, then update the Stageline API credential in n8n.`;
		case 402:
			return "Your company's Stageline subscription is not active, so the API is unavailable. Ask a Stageline admin of your company to reactivate it, then run the workflow again.";
		case 403:
			return `This Stageline API key is not allowed to do this. Create a key with the missing scope in Stageline under ${API_KEYS_LOCATION} (new keys get every scope), then update the Stageline API credential in n8n.`;
		case 404:
			return 'Stageline could not find it. Check the ID given to this node; it may have been deleted or belong to another company.';
		case 409: {
			const now = problem.current_version === undefined ? 'a newer version' : `version ${problem.current_version}`;
			return `The item (or note) changed since it was read: Stageline now has ${now}, but this node sent a different Version. Read it right before this node and use its version, or leave Version empty to update (or delete) regardless.`;
		}
		case 413:
			return 'The request is too large for Stageline (the limit is 1 MiB). Send shorter texts.';
		case 422:
			return 'Stageline could not use some of the values. Check the pipeline, stage, status and custom field values.';
		case 429:
			return 'Too many requests: Stageline allows 60 requests per minute per API key, and this node already waited once for the time Stageline asked. Process fewer items per minute: put a Loop Over Items node (batches of up to 50) before this node and a Wait node of 60 seconds after it. (Retry On Fail waits at most 5 seconds, less than a rate-limit window.)';
		default:
			return status >= 500
				? `Stageline had a server error (HTTP ${status}). This is usually temporary; try again in a few minutes.`
				: `Stageline answered with HTTP ${status}.`;
	}
}

/**
 * The description of an error response.
 * @param status HTTP status (>= 400).
 * @param body the parsed JSON body (a problem per CONTRACT "Errors"), or a string when it was not JSON.
 * @param retryAfterSeconds the `Retry-After` header of a 429, when present.
 * @param requestIdHeader the `Request-Id` header: the message ends with ` (request <id>)` from the body's
 *   `request_id`, else this (CONTRACT "Request ids and the request log").
 */
export function describeProblem(status: number, body: unknown, retryAfterSeconds?: number, requestIdHeader?: string): DescribedProblem {
	const problem = readProblem(body);
	const detail = problem.detail ?? problem.title ?? (typeof body === 'string' ? body.trim().slice(0, 200) : '');
	const wait = status === 429 && retryAfterSeconds !== undefined ? `Stageline asks to wait ${retryAfterSeconds} s.` : '';
	const matches = problem.matches !== undefined && problem.matches.length > 0 ? `Matching items: ${problem.matches.join(', ')}.` : '';
	const requestId = requestIdOf(body, requestIdHeader);
	return {
		status,
		code: problem.code ?? `http_${status}`,
		message: requestId === undefined ? advice(status, problem) : `${advice(status, problem)} (request ${requestId})`,
		description: join(detail, matches, wait, formatFieldErrors(problem.errors)),
		...(requestId === undefined ? {} : { requestId }),
	};
}
