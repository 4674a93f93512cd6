/**
 * The client's errors (CONTRACT "Client library", "Errors"): one base class, `StagelineError`, built from the
 * server's RFC 9457 problem details, one subclass per kind of failure, and `ConnectionError` when the network or a
 * timeout defeats every attempt. `errorFromResponse` is the one factory that picks the class from the status.
 */
import { challengeParam, isInvalidTokenChallenge } from "./bearer-auth";
import type { ItemBatchResult, Problem, ProblemFieldError, TaskBatchResult } from "./types";

/** One result of a batch (items or tasks). */
type BatchResult = ItemBatchResult | TaskBatchResult;

/** What the server answered: the status, the parsed problem (when the body was one) and the response headers. */
export interface ErrorResponse {
  status: number;
  /** The problem-details body, or undefined when the body was not a JSON object. */
  problem: Partial<Problem> | undefined;
  headers: Headers;
}

/** The response header naming a request (CONTRACT "Request ids and the request log"). */
const REQUEST_ID_HEADER = "Request-Id";

/** The longest request id an error takes over (the server's are 26 characters); a longer value is not shown. */
const MAX_REQUEST_ID_LENGTH = 100;

/** `value` when it can be a request id (1..100 visible ASCII characters, as an id to paste must be), else undefined. */
function asRequestId(value: unknown): string | undefined {
  return typeof value === "string" && value.length <= MAX_REQUEST_ID_LENGTH && /^[\x21-\x7E]+$/.test(value) ? value : undefined;
}

/**
 * The id of the request an answer was for: the problem body's `request_id`, else the `Request-Id` response header;
 * undefined when neither carries one (e.g. a proxy's own 502 page).
 */
export function requestIdOf(problem: { request_id?: unknown } | undefined, headers: Headers): string | undefined {
  return asRequestId(problem?.request_id) ?? asRequestId(headers.get(REQUEST_ID_HEADER));
}

/** `message` with ` (request <id>)` appended when there is an id: what a person pastes into the console's Requests search. */
function withRequestId(message: string, requestId: string | undefined): string {
  return requestId === undefined ? message : `${message} (request ${requestId})`;
}

/**
 * An error answer of the API (any status >= 400; or, as InvalidResponseError, a 2xx whose body is not JSON). Fields
 * come from the problem-details body.
 * `code` is the stable machine string (`validation_failed`, `not_found`, `version_conflict`, ...; `unknown` when the
 * body carried none); `errors` lists failing fields for `400 validation_failed`; `currentVersion` is the item's
 * current version on `409 version_conflict`; `requestId` names the request (the message ends with
 * ` (request <id>)` when there is one).
 */
export class StagelineError extends Error {
  /** HTTP status of the answer. */
  readonly status: number;
  /** Stable machine code of the problem (CONTRACT "Errors"), or `unknown` when the body carried none. */
  readonly code: string;
  /** The problem's short title. */
  readonly title: string;
  /** The problem's human explanation of this occurrence. */
  readonly detail: string;
  /** Every failing field (`{ path, message }`), for validation problems; empty otherwise. */
  readonly errors: ProblemFieldError[];
  /** The resource's current version, for `409 version_conflict`; undefined otherwise. */
  readonly currentVersion: number | undefined;
  /** The whole problem body as the server sent it (e.g. `valid_events` of an unknown event name). */
  readonly problem: Partial<Problem> | undefined;
  /** The response headers (e.g. `Retry-After`, `RateLimit-Reset`). */
  readonly headers: Headers;
  /**
   * The request's id (CONTRACT "Request ids and the request log"): the problem's `request_id`, else the `Request-Id`
   * header; undefined when the answer carried neither (e.g. a proxy's error page). Quote it to support, or paste it
   * into the console's Requests search.
   */
  readonly requestId: string | undefined;

  constructor(response: ErrorResponse) {
    const p = response.problem ?? {};
    const title = typeof p.title === "string" ? p.title : `HTTP ${response.status}`;
    const detail = typeof p.detail === "string" ? p.detail : "";
    const requestId = requestIdOf(response.problem, response.headers);
    super(withRequestId(detail ? `${title}: ${detail}` : title, requestId));
    this.name = new.target.name;
    this.status = response.status;
    this.code = typeof p.code === "string" ? p.code : "unknown";
    this.title = title;
    this.detail = detail;
    this.errors = Array.isArray(p.errors) ? p.errors : [];
    this.currentVersion = typeof p.current_version === "number" ? p.current_version : undefined;
    this.problem = response.problem;
    this.headers = response.headers;
    this.requestId = requestId;
  }
}

/**
 * 401 (`invalid_api_key`): the credentials are not valid: the API key is missing, unknown, revoked or expired, or (as
 * `AccessTokenError`) the OAuth access token was refused.
 */
export class AuthenticationError extends StagelineError {}

/** Why the server refused an OAuth access token (the problem's `token_error`). */
export type AccessTokenErrorReason = "expired" | "wrong_resource" | "unknown";

const TOKEN_ERROR_REASONS: readonly string[] = ["expired", "wrong_resource", "unknown"];

/**
 * 401 for an OAuth access token (CONTRACT "Connect with OAuth 2.1"): `WWW-Authenticate: Bearer error="invalid_token"`.
 * `reason` is the problem's `token_error`: `expired`; `wrong_resource`, issued for another resource (e.g. the MCP
 * endpoint `.../v1/ext/mcp`): a refresh would give another token for that resource, so the client does not refresh,
 * get a token for the REST API `<origin>/v1/ext` instead; `unknown`: revoked, never issued, or expired long ago (also
 * when the server said no more). `description` is the challenge's `error_description` ("" when absent). `code` stays
 * the server's (`invalid_api_key`, the contract's one 401 code).
 */
export class AccessTokenError extends AuthenticationError {
  /** Why the token was refused. */
  readonly reason: AccessTokenErrorReason;
  /** The challenge's `error_description`, e.g. "The access token was issued for resource https://.../v1/ext/mcp, ...". */
  readonly description: string;
  constructor(response: ErrorResponse) {
    super(response);
    const said = (response.problem as { token_error?: unknown } | undefined)?.token_error;
    this.reason = typeof said === "string" && TOKEN_ERROR_REASONS.includes(said) ? (said as AccessTokenErrorReason) : "unknown";
    this.description = challengeParam(response.headers.get("www-authenticate") ?? "", "error_description") ?? "";
  }
}

/** 402 (`subscription_inactive`) or 403 (`insufficient_scope`, the missing scope named in `detail`). */
export class PermissionError extends StagelineError {}
/** 404: no such id in this company (`not_found`). */
export class NotFoundError extends StagelineError {}
/** 409: `version_conflict` (see `currentVersion`) or `idempotency_key_in_use`. */
export class ConflictError extends StagelineError {}
/** 400 (`validation_failed`, see `errors`) or 422 (`invalid_reference`, `pipeline_archived`, `idempotency_key_reused`). */
export class ValidationError extends StagelineError {}
/**
 * 422 `batch_failed`: an operation of an atomic batch (`items.batch`, `tasks.batch` with `atomic: true`) failed, so
 * none was applied (CONTRACT "Batch writes"). `results` holds one entry per operation in order: the failed one with its
 * status and `problem`, every other one `status: 424`.
 */
export class BatchFailedError extends ValidationError {
  /** The batch's results as the server sent them (`index`, `ref`, `status`, `problem`, `item` or `task`). */
  readonly results: BatchResult[];
  constructor(response: ErrorResponse) {
    super(response);
    const results = (response.problem as { results?: unknown } | undefined)?.results;
    this.results = Array.isArray(results) ? (results as BatchResult[]) : [];
  }
}
/**
 * 410 `cursor_expired`: the `after` event id given to `events.list`, `events.iterate` or `events.follow` is no longer
 * retained (events are kept for the server's retention period, 30 days by default): events may have been missed, so
 * resynchronise (e.g. list what you mirror again) and follow again from a recent event (CONTRACT "Events feed").
 */
export class CursorExpiredError extends StagelineError {}
/** 429 that outlasted `maxRateLimitWaitMs` (`rate_limited`); `retryAfterSeconds` from the last answer. */
export class RateLimitError extends StagelineError {
  /** Seconds the server asked to wait (`Retry-After`), when it said. */
  readonly retryAfterSeconds: number | undefined;
  constructor(response: ErrorResponse) {
    super(response);
    const value = Number(response.headers.get("retry-after"));
    this.retryAfterSeconds = response.headers.has("retry-after") && Number.isFinite(value) ? value : undefined;
  }
}
/** 5xx that outlasted the retries (or was not retried: a write without an idempotency key). */
export class ServerError extends StagelineError {}

/**
 * A 2xx answer whose body is not the JSON the API promises (e.g. an HTML page of a proxy in between). `status` and
 * `headers` are the answer's, `code` is `invalid_response`, `cause` the JSON parser's SyntaxError. Not retried.
 */
export class InvalidResponseError extends StagelineError {
  constructor(response: Response, cause: SyntaxError) {
    // The code is the client's own, not one of the server's problem codes, hence the cast.
    const problem = { title: "Invalid response", detail: `the ${response.status} answer's body is not JSON (${cause.message})`, code: "invalid_response" } as unknown as Partial<Problem>;
    super({ status: response.status, problem, headers: response.headers });
    this.cause = cause;
  }
}

/**
 * No answer: a network error or a per-attempt timeout (`timeoutMs`) on every attempt. `cause` is the last
 * underlying error (a `TypeError` from fetch, or a `TimeoutError` DOMException). Not a `StagelineError`: there is no
 * status. `requestId` is undefined, unless the last attempt's answer headers did arrive (its body then failed or
 * timed out): then it is their `Request-Id`, and the message ends with ` (request <id>)`.
 */
export class ConnectionError extends Error {
  /** The `Request-Id` of the last attempt's answer when its headers arrived; undefined when no answer came. */
  readonly requestId: string | undefined;
  constructor(message: string, options: { cause: unknown; headers?: Headers }) {
    const requestId = options.headers ? requestIdOf(undefined, options.headers) : undefined;
    super(withRequestId(message, requestId), { cause: options.cause });
    this.name = "ConnectionError";
    this.requestId = requestId;
  }
}

/**
 * Builds the error for an answer with status >= 400: the subclass by status (401 Authentication, or AccessToken when the
 * server refused an OAuth access token: an `invalid_token` challenge or a `token_error`; 402/403 Permission,
 * 404 NotFound, 409 Conflict, 400/422 Validation (422 `batch_failed`: BatchFailed), 410 `cursor_expired` CursorExpired,
 * 429 RateLimit, 5xx Server; any other status the base class).
 * @param response the status, the parsed body (anything; only a JSON object counts as a problem) and headers.
 */
export function errorFromResponse(response: { status: number; body: unknown; headers: Headers }): StagelineError {
  const problem = response.body !== null && typeof response.body === "object" && !Array.isArray(response.body) ? (response.body as Partial<Problem>) : undefined;
  const args: ErrorResponse = { status: response.status, problem, headers: response.headers };
  const s = response.status;
  if (s === 401) return isInvalidTokenChallenge(s, response.headers) || (problem as { token_error?: unknown } | undefined)?.token_error !== undefined ? new AccessTokenError(args) : new AuthenticationError(args);
  if (s === 402 || s === 403) return new PermissionError(args);
  if (s === 404) return new NotFoundError(args);
  if (s === 409) return new ConflictError(args);
  if (s === 422 && problem?.code === "batch_failed") return new BatchFailedError(args);
  if (s === 400 || s === 422) return new ValidationError(args);
  if (s === 410 && problem?.code === "cursor_expired") return new CursorExpiredError(args);
  if (s === 429) return new RateLimitError(args);
  if (s >= 500) return new ServerError(args);
  return new StagelineError(args);
}
