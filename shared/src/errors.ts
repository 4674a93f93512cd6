import { z } from "zod";

/** CONTRACT "Errors": the stable machine-readable `code` of every problem response. */
export const ERROR_CODES = [
  "invalid_api_key",
  "subscription_inactive",
  "insufficient_scope",
  "rate_limited",
  "validation_failed",
  "not_found",
  "method_not_allowed",
  "version_conflict",
  "invalid_reference",
  "payload_too_large",
  "idempotency_key_reused",
  "idempotency_key_in_use",
  "pipeline_archived",
  "request_timeout",
  "ambiguous_match",
  "upsert_unavailable",
  "payload_erased",
  "cursor_expired",
  "batch_failed",
  "service_unavailable",
  "internal",
] as const;

/** One problem `code`. */
export type ErrorCode = (typeof ERROR_CODES)[number];

/** CONTRACT "Errors": a problem `code`. */
export const ErrorCodeSchema = z.enum(ERROR_CODES);

/** CONTRACT "Errors": the media type of every error response (RFC 9457). */
export const PROBLEM_CONTENT_TYPE = "application/problem+json";

/** Base of the problem `type` URIs. */
export const PROBLEM_TYPE_BASE = "https://docs.stageline.dev/problems/";

/**
 * CONTRACT "Errors" and spec "Errors": the HTTP status of each problem code
 * (401, 402, 403, 429 are the spec's; the rest are the contract's, the two idempotency codes from CONTRACT "Idempotency",
 * 405 `method_not_allowed` from CONTRACT "HTTP semantics"; 409 `ambiguous_match` and 422 `upsert_unavailable` from CONTRACT
 * "Upsert"; 410 `payload_erased` from CONTRACT "Item deletion and erasure"; 410 `cursor_expired` from CONTRACT "Events feed";
 * 422 `batch_failed` from CONTRACT "Batch writes"; 503 `service_unavailable`, with `Retry-After`, while the database cannot be
 * reached, CONTRACT "Errors").
 */
export const PROBLEM_STATUS = {
  invalid_api_key: 401,
  subscription_inactive: 402,
  insufficient_scope: 403,
  rate_limited: 429,
  validation_failed: 400,
  not_found: 404,
  method_not_allowed: 405,
  version_conflict: 409,
  invalid_reference: 422,
  payload_too_large: 413,
  idempotency_key_reused: 422,
  idempotency_key_in_use: 409,
  pipeline_archived: 422,
  request_timeout: 408,
  ambiguous_match: 409,
  upsert_unavailable: 422,
  payload_erased: 410,
  cursor_expired: 410,
  batch_failed: 422,
  service_unavailable: 503,
  internal: 500,
} as const satisfies Record<ErrorCode, number>;

/** CONTRACT "Errors": the human `title` of each problem code (RFC 9457: the same for every occurrence of the type). */
export const PROBLEM_TITLES = {
  // Every 401: a bad API key or a bad OAuth access token (issue 39: a token is never called an API key).
  invalid_api_key: "Invalid credentials",
  subscription_inactive: "Subscription inactive",
  insufficient_scope: "Insufficient scope",
  rate_limited: "Rate limit exceeded",
  validation_failed: "Validation failed",
  not_found: "Not found",
  method_not_allowed: "Method not allowed",
  version_conflict: "Version conflict",
  invalid_reference: "Invalid reference",
  payload_too_large: "Payload too large",
  idempotency_key_reused: "Idempotency key reused",
  idempotency_key_in_use: "Idempotency key in use",
  pipeline_archived: "Pipeline archived",
  request_timeout: "Request timeout",
  ambiguous_match: "Ambiguous match",
  upsert_unavailable: "Upsert unavailable",
  payload_erased: "Payload erased",
  cursor_expired: "Cursor expired",
  batch_failed: "Batch failed",
  service_unavailable: "Service unavailable",
  internal: "Internal server error",
} as const satisfies Record<ErrorCode, string>;

/** The problem `type` URI of a code, e.g. `version_conflict` -> `https://docs.stageline.dev/problems/version-conflict`. */
export function problemTypeUri(code: ErrorCode): string {
  return PROBLEM_TYPE_BASE + code.replace(/_/g, "-");
}

/** CONTRACT "Errors": one failing field of a 400/422: `path` like `metadata.deal_value` or `stages[0].name` ("" = the whole body). */
export const ProblemFieldErrorSchema = z.object({
  path: z.string(),
  message: z.string(),
});
/** One entry of a problem's `errors` list. */
export type ProblemFieldError = z.infer<typeof ProblemFieldErrorSchema>;

/**
 * Why an OAuth access token was refused (CONTRACT "Connect with OAuth 2.1"; issue 39), carried as `token_error` by the
 * `401 invalid_api_key` of a request that presented one: `expired` (refresh it), `wrong_resource` (issued for the other
 * resource, RFC 8707: refreshing gives another token for that resource, so ask for one for this resource), `unknown`
 * (revoked, its user gone from the company, never issued, or expired long enough ago to be purged: refresh it, or
 * connect the app again).
 */
export const TOKEN_ERRORS = ["expired", "wrong_resource", "unknown"] as const;
/** One `token_error`. */
export type TokenError = (typeof TOKEN_ERRORS)[number];

/**
 * CONTRACT "Errors": the RFC 9457 problem-details body of every error response.
 * `current_version` is carried by 409 `version_conflict`; `valid_events` by the 422 for an unknown event name;
 * `matches` (the `item_id`s of the matching items, best match first) by 409 `ambiguous_match` (CONTRACT "Upsert");
 * `token_error` by the 401 of a refused OAuth access token (`TOKEN_ERRORS`).
 * Not strict: clients ignore members they do not know (RFC 9457 extension members).
 */
export const ProblemSchema = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string(),
  code: ErrorCodeSchema,
  errors: z.array(ProblemFieldErrorSchema).optional(),
  current_version: z.number().int().optional(),
  valid_events: z.array(z.string()).optional(),
  matches: z.array(z.string()).optional(),
  token_error: z.enum(TOKEN_ERRORS).optional(),
  /**
   * The `Request-Id` response header's value (CONTRACT "Request ids and the request log"): quote it to support, or
   * search for it in the console's Requests page.
   */
  request_id: z.string().optional(),
});
/** A problem-details error body. */
export type Problem = z.infer<typeof ProblemSchema>;

/** The optional members a problem may carry beside the standard ones. */
export type ProblemExtras = Pick<Problem, "errors" | "current_version" | "valid_events" | "matches" | "token_error">;

/** At most this many `errors` entries in one problem body; the last one then says how many were left out. */
export const MAX_PROBLEM_FIELD_ERRORS = 100;

/** At most this many characters of `detail` in one problem body. */
export const MAX_PROBLEM_DETAIL_CHARS = 2000;

/**
 * `errors` bounded to `MAX_PROBLEM_FIELD_ERRORS` entries (issue 12: a body with thousands of bad fields must not get an
 * error body thousands of times larger). The first failures are kept in order; a last entry counts the rest.
 */
function boundFieldErrors(errors: ProblemFieldError[]): ProblemFieldError[] {
  if (errors.length <= MAX_PROBLEM_FIELD_ERRORS) return errors;
  const kept = errors.slice(0, MAX_PROBLEM_FIELD_ERRORS - 1);
  const rest = errors.length - kept.length;
  return [...kept, { path: "", message: `${rest.toLocaleString("en-US")} more problems are not listed; fix these and send the request again.` }];
}

/**
 * Builds a complete problem body for `code`, filling `type`, `title` and `status` from the tables above (`status`
 * overrides the code's usual status, e.g. 422 for a `validation_failed` over a blueprint limit). `detail` and
 * `errors` are bounded (`MAX_PROBLEM_DETAIL_CHARS`, `MAX_PROBLEM_FIELD_ERRORS`) so every error body stays small.
 */
export function createProblem(code: ErrorCode, detail: string, extras: ProblemExtras = {}, status: number = PROBLEM_STATUS[code]): Problem {
  const problem: Problem = {
    type: problemTypeUri(code),
    title: PROBLEM_TITLES[code],
    status,
    detail: detail.length > MAX_PROBLEM_DETAIL_CHARS ? `${detail.slice(0, MAX_PROBLEM_DETAIL_CHARS - 1)}…` : detail,
    code,
  };
  if (extras.errors !== undefined) problem.errors = boundFieldErrors(extras.errors);
  if (extras.current_version !== undefined) problem.current_version = extras.current_version;
  if (extras.valid_events !== undefined) problem.valid_events = extras.valid_events;
  if (extras.matches !== undefined) problem.matches = extras.matches;
  if (extras.token_error !== undefined) problem.token_error = extras.token_error;
  return problem;
}

/** Formats a zod issue path as `a.b[0].c` ("" for the root). */
export function formatIssuePath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else out += out === "" ? String(segment) : `.${String(segment)}`;
  }
  return out;
}

/**
 * CONTRACT "Errors" (400 lists every failing field): turns a zod error into problem `errors` entries.
 * An unknown-fields issue becomes one entry per unknown field, with that field as its path.
 */
export function toFieldErrors(error: z.ZodError | readonly z.core.$ZodIssue[]): ProblemFieldError[] {
  const issues = error instanceof z.ZodError ? error.issues : error;
  const out: ProblemFieldError[] = [];
  for (const issue of issues) {
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) out.push({ path: formatIssuePath([...issue.path, key]), message: issue.message });
    } else {
      out.push({ path: formatIssuePath(issue.path), message: issue.message });
    }
  }
  return out;
}

/**
 * A domain error: a failure with a stable problem `code` (CONTRACT "Errors"), raised by parsing, services and the data
 * checks alike. It carries no HTTP: each edge renders it in its own format (the API as RFC 9457 problem details via
 * `createProblem`, the console as an HTML page). `status` is the code's HTTP status (`PROBLEM_STATUS`), which both edges use,
 * unless the error names another: a well-formed input over a limit is `validation_failed` with 422 (CONTRACT
 * "Pipelines, blueprints, transitions": a blueprint beyond its limits is `422 validation_failed`).
 */
export class DomainError extends Error {
  /** HTTP status: `status` when given, else the code's (`PROBLEM_STATUS[code]`). */
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly extras: ProblemExtras = {},
    status?: number,
  ) {
    super(detail);
    this.name = "DomainError";
    this.status = status ?? PROBLEM_STATUS[code];
  }
}
