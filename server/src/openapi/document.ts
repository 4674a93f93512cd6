/**
 * The OpenAPI 3.1 document of the external API, generated from the zod contract (`@stageline/shared`) and the
 * operation registry (operations.ts) by zod-openapi (which renders zod 4's own JSON Schema output). Nothing in it is
 * written by hand: paths, parameters, bodies, responses and problem codes all come from the contract.
 *
 * Every keyed operation documents the problems any keyed request can meet (400 malformed request, 401, 402, 408 slow
 * body, 413, 429 with `Retry-After`, 500, 503 `service_unavailable` with `Retry-After`) plus 403 when it needs a scope and its own codes (CONTRACT "Errors"); every response
 * of a keyed operation carries the IETF `RateLimit-*` headers (CONTRACT "Scopes and limits"), and every response of
 * every operation `Request-Id`, whose value problem bodies repeat as `request_id` (CONTRACT "Request ids and the
 * request log").
 * The committed snapshot is docs/openapi.json (`npm run openapi:snapshot` rewrites it; a test fails when it drifts).
 */
import { z } from "zod";
import { createDocument, type ZodOpenApiObject, type ZodOpenApiOperationObject, type ZodOpenApiResponseObject } from "zod-openapi";
import {
  API_CHANGELOG_URL,
  API_KEY_HEADER,
  DuplicateMatchSchema,
  ERROR_CODES,
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENCY_KEY_TTL_SECONDS,
  IDEMPOTENT_REPLAYED_HEADER,
  ItemSchema,
  MAX_PAGE_LIMIT,
  MeSchema,
  PipelineFieldSchema,
  PipelineSchema,
  PROBLEM_CONTENT_TYPE,
  PROBLEM_STATUS,
  ProblemFieldErrorSchema,
  ProblemSchema,
  RATE_LIMIT,
  StageSchema,
  StatusSchema,
  TaskSchema,
  NoteSchema,
  WebhookDeliverySchema,
  WebhookSubscriptionCreatedSchema,
  WebhookSubscriptionSchema,
  UPSERT_RESULT_HEADER,
  createProblem,
  type ErrorCode,
  type UpsertResult,
} from "@stageline/shared";
import { REQUEST_ID_HEADER } from "../http/request-id";
import { API_OPERATIONS, API_TAGS, API_VERSION, type ApiDeprecation, type ApiOperation } from "./operations";
import { EVENT_PAYLOAD_COMPONENTS, webhookEventsSection } from "./webhook-events";

/** The name of the API-key security scheme in `components.securitySchemes`. */
export const API_KEY_SCHEME = "ApiKeyAuth";
/** The name of the OAuth access-token security scheme (issue 32, CONTRACT "Connect with OAuth 2.1"). */
export const OAUTH_TOKEN_SCHEME = "OAuthAccessToken";

/** The problems every operation that takes a key can answer (CONTRACT "Errors", spec "Errors"). */
const KEYED_ERRORS: readonly ErrorCode[] = [
  "validation_failed",
  "invalid_api_key",
  "subscription_inactive",
  "request_timeout",
  "payload_too_large",
  "rate_limited",
  "service_unavailable",
  "internal",
];

/** A `detail` for each code's example body. */
const EXAMPLE_DETAILS: Record<ErrorCode, string> = {
  invalid_api_key: "The API key is missing, unknown, revoked or expired. Send a valid key in the x-api-key header.",
  subscription_inactive: "The company's subscription is inactive.",
  insufficient_scope: "This API key lacks the scope items:write.",
  rate_limited: `Rate limit of ${RATE_LIMIT.limit} requests per ${RATE_LIMIT.windowSeconds} seconds exceeded. Retry after 12 seconds.`,
  validation_failed: "The request body is invalid (name).",
  not_found: "Item 01935d70-1b2c-7d4e-8f50-6a7b8c9d0e1f was not found.",
  method_not_allowed: "GET is not supported on /v1/ext/items/check-duplicates; use OPTIONS, POST.",
  version_conflict: "The item is at version 3, not 2. Read it again and retry with the current version.",
  invalid_reference: "stage_id does not name a stage of this pipeline.",
  payload_too_large: "The request body is larger than 1 MiB.",
  request_timeout: "The request body did not arrive within 30 s.",
  idempotency_key_reused: "This Idempotency-Key was used with a different request body. Use a new key for a new request.",
  idempotency_key_in_use: "A request with this Idempotency-Key is still being processed. Retry after 1 second.",
  pipeline_archived: "Pipeline Sales is archived: no item can be created in it. Restore it in the console first.",
  ambiguous_match: "2 items match this upsert under the pipeline's duplicate detection (email); update one of them by id instead.",
  upsert_unavailable: "Pipeline Sales has no duplicate detection, so an upsert cannot find the item to update.",
  payload_erased: "The item of this delivery was deleted and its payload erased; it cannot be sent again.",
  cursor_expired: "Event 01935d70-1b2c-7d4e-8f50-6a7b8c9d0e1f is no longer retained: events may have been missed. Resynchronize, then follow the feed from a recent event.",
  batch_failed: "Operation 2 failed, so none of this atomic batch was applied (the others answer 424). Fix it and send the batch again.",
  service_unavailable: "The service cannot reach its database just now. Retry after 5 seconds.",
  internal: "Something went wrong on our side. Please try again.",
};

/** Extension members carried by some codes, for their examples. */
const EXAMPLE_EXTRAS: Partial<Record<ErrorCode, Parameters<typeof createProblem>[2]>> = {
  validation_failed: { errors: [{ path: "name", message: "name is required." }] },
  version_conflict: { current_version: 3 },
  ambiguous_match: { matches: ["01935d70-1b2c-7d4e-8f50-6a7b8c9d0e1f", "01935d70-1b2c-7d4e-8f50-6a7b8c9d0e20"] },
  invalid_reference: { errors: [{ path: "stage_id", message: "stage_id does not name a stage of this pipeline." }] },
};

/** What each status means, for the response descriptions. */
const STATUS_MEANING: Record<number, string> = {
  400: "Malformed request: invalid JSON, a body or query that fails its schema (every failing field in `errors`), or a malformed `Idempotency-Key`.",
  401:
    "Credentials missing or not valid: an API key missing, unknown, revoked or expired, or an OAuth access token expired, " +
    "unknown or issued for the other resource (`token_error`: `expired`, `unknown`, `wrong_resource`; the " +
    "`WWW-Authenticate: Bearer error=\"invalid_token\"` challenge's `error_description` says it in words).",
  402: "The company's subscription is inactive.",
  403: "The key lacks the scope this operation needs (named in `detail`).",
  404: "An id in the path does not exist or belongs to another company.",
  408: "The request body did not arrive in time (slow client); the connection is closed. May come before the rate limiter has counted the request, so without RateLimit headers.",
  409: "Conflict.",
  413: "Request body over 1 MiB.",
  422: "Well-formed request whose references do not resolve.",
  429: "Over the rate limit; retry after `Retry-After` seconds.",
  500: "Unexpected server error (no stack trace or SQL is ever shown).",
  503: "The database cannot be reached just now; retry after `Retry-After` seconds (nothing was half-written). May come before the rate limiter has counted the request, so the RateLimit headers may be missing.",
};

const CODE_MEANING: Partial<Record<ErrorCode, string>> = {
  version_conflict: "`version_conflict`: the body's `version` is not the current one (`current_version` says which is).",
  idempotency_key_in_use: "`idempotency_key_in_use`: the first request with this `Idempotency-Key` is still running; retry after `Retry-After` seconds.",
  idempotency_key_reused: "`idempotency_key_reused`: this `Idempotency-Key` was used with a different body.",
  invalid_reference: "`invalid_reference`: a pipeline, stage, status, item, custom field or event name that does not resolve.",
  pipeline_archived: "`pipeline_archived`: the pipeline is archived; its items stay readable and updatable, but no item can be created in it.",
  ambiguous_match: "`ambiguous_match`: several items match the upsert under the pipeline's duplicate detection; `matches` lists their `item_id`s, best match first.",
  upsert_unavailable: "`upsert_unavailable`: the pipeline has no duplicate detection, or the body carries no value it compares, so an upsert cannot find its item.",
  batch_failed: "`batch_failed`: an operation of an atomic batch failed, so none was applied; the body carries `results` (the failed operation with its status and problem, the others `424`).",
};

// --- headers (components.headers) -----------------------------------------------------------------------------

/** A response header registered under `components.headers[id]` (required unless `schema` is optional). */
const header = (id: string, schema: z.ZodType, description: string) => schema.meta({ description, header: { id } });

const rateLimitHeaders = z.object({
  "RateLimit-Limit": header("RateLimitLimit", z.int().min(0), `Requests allowed per window (${RATE_LIMIT.limit} per key per ${RATE_LIMIT.windowSeconds} s; IETF RateLimit header fields).`),
  "RateLimit-Remaining": header("RateLimitRemaining", z.int().min(0), "Requests left in the current window."),
  "RateLimit-Reset": header("RateLimitReset", z.int().min(0), "Seconds until the current window ends."),
});
/** Every response's id (server/src/http/request-id.ts); `request_id` of a problem body repeats it. */
const requestIdHeader = header(
  "RequestId",
  z.string().meta({ example: "req_8Zq2xWmC1vR4nT7bY0kLdA" }),
  "The id of this request (opaque; `req_` and 22 characters today): quote it to support, or paste it into the console's " +
    "Requests search (Developers) to see what the request did. Problem bodies carry the same value as `request_id`.",
);
/** `request_id` as problem bodies carry it: the described member of the response schemas. */
const problemRequestId = z
  .string()
  .meta({ description: "The `Request-Id` header of this response (CONTRACT \"Request ids and the request log\").", example: "req_8Zq2xWmC1vR4nT7bY0kLdA" })
  .optional();
const retryAfter = header("RetryAfter", z.int().min(0), "Seconds to wait before retrying.");
const linkHeader = header(
  "Link",
  z.string().meta({ example: '<https://api.example.com/v1/ext/items?cursor=WyIyMDI2LTAzLTAxVDA5OjMwOjAwLjAwMFoiLCIwMTkzIl0&limit=100>; rel="next"' }).optional(),
  "RFC 8288 `rel=\"next\"` link to the next page (keyset pagination); absent on the last page.",
);
const locationHeader = header("Location", z.string().meta({ example: "/v1/ext/items/01935d70-1b2c-7d4e-8f50-6a7b8c9d0e1f" }), "Path of the created resource.");
const replayedHeader = header(
  "IdempotentReplayed",
  z.enum(["true"]).optional(),
  "Present (`true`) when this response is a replay of the first response to the same `Idempotency-Key`.",
);

const upsertResultHeader = (values: readonly UpsertResult[]) =>
  header(
    `StagelineUpsert${values.map(pascal).join("Or")}`,
    z.enum(values as [UpsertResult, ...UpsertResult[]]),
    "What the upsert did: `created` (201), `updated` or `unchanged` (200: nothing was written or emitted). Replayed with the response.",
  );

const deprecationHeader = header(
  "Deprecation",
  z.string().regex(/^@\d+$/).meta({ example: "@1795478400" }),
  "RFC 9745: this operation is deprecated since this instant (`@` + Unix seconds). Every response of the operation carries it.",
);
const sunsetHeader = header(
  "Sunset",
  z.string().meta({ example: "Sat, 01 May 2027 00:00:00 GMT" }),
  "RFC 8594: the HTTP-date after which this operation stops working.",
);
const deprecationLinkHeader = header(
  "DeprecationLink",
  z.string().meta({ example: `<${API_CHANGELOG_URL}#2026-11-24>; rel="deprecation"; type="text/html"` }),
  "RFC 9745: `rel=\"deprecation\"` link to the changelog entry that announces the deprecation.",
);

/** The response headers of a deprecated operation (CONTRACT "Versioning and compatibility"). */
function deprecationHeaderSchemas(withSunset: boolean): Record<string, z.ZodType> {
  return { Deprecation: deprecationHeader, ...(withSunset ? { Sunset: sunsetHeader } : {}), Link: deprecationLinkHeader };
}

function deprecationText(dep: ApiDeprecation): string {
  const sunset = dep.sunset ? ` It stops working on ${dep.sunset} (\`Sunset\`).` : "";
  return `**Deprecated** since ${dep.since}: see the changelog entry of ${dep.changelogEntry} (\`Link: rel="deprecation"\`).${sunset} Every response carries \`Deprecation\`.`;
}

// --- problem responses (components.responses) ------------------------------------------------------------------

function pascal(code: string): string {
  return code.replace(/(^|_)([a-z])/g, (_m, _s, c: string) => c.toUpperCase());
}

const problemResponses = new Map<string, ZodOpenApiResponseObject>();

/** The shared response of one status answering `codes`, registered once under an id derived from the codes. */
function problemResponse(
  status: number,
  codes: readonly ErrorCode[],
  keyed: boolean,
  idempotent: boolean,
  extension?: ApiOperation["problemExtension"],
): ZodOpenApiResponseObject {
  const sorted = [...codes].sort();
  const extended = extension && sorted.includes(extension.code) ? extension : undefined;
  const id = sorted.map(pascal).join("Or") + (keyed ? "" : "Public") + (idempotent ? "Replayable" : "") + (extended?.id ?? "");
  const cached = problemResponses.get(id);
  if (cached) return cached;
  const schema = ProblemSchema.extend({
    status: z.literal(status),
    code: z.enum(sorted as [ErrorCode, ...ErrorCode[]]),
    request_id: problemRequestId,
    ...(extended?.shape ?? {}),
  });
  const retryCodes = sorted.filter((c) => c === "rate_limited" || c === "idempotency_key_in_use" || c === "service_unavailable");
  // A 408 can be answered before the rate limiter has run (http/body-timeout.ts), so it documents no RateLimit headers;
  // a 503 may come from the key lookup before it, or from a later step after it, so they are optional there.
  const rateLimit: Record<string, z.ZodType> =
    keyed && status === 503
      ? Object.fromEntries(Object.entries(rateLimitHeaders.shape).map(([name, schema]) => [name, schema.optional()]))
      : keyed && status !== 408
        ? { ...rateLimitHeaders.shape }
        : {};
  const headers: Record<string, z.ZodType> = { [REQUEST_ID_HEADER]: requestIdHeader, ...rateLimit };
  // Required when every code of the status sends it; optional beside codes that do not (the upsert's 409s).
  if (retryCodes.length > 0) headers["Retry-After"] = retryCodes.length === sorted.length ? retryAfter : retryAfter.optional();
  if (idempotent && status < 500 && status !== 429) headers[IDEMPOTENT_REPLAYED_HEADER] = replayedHeader;
  const meanings = sorted.map((c) => CODE_MEANING[c]).filter((m): m is string => m !== undefined);
  const response: ZodOpenApiResponseObject = {
    id,
    description: [STATUS_MEANING[status] ?? "Error.", ...meanings].join(" "),
    headers: z.object(headers),
    content: {
      [PROBLEM_CONTENT_TYPE]: {
        schema,
        examples: Object.fromEntries(
          sorted.map((code) => [code, { value: createProblem(code, EXAMPLE_DETAILS[code], EXAMPLE_EXTRAS[code]) }]),
        ),
      },
    },
  };
  problemResponses.set(id, response);
  return response;
}

/** Every problem code an operation can answer. */
export function operationErrorCodes(op: ApiOperation): ErrorCode[] {
  const codes = new Set<ErrorCode>(op.errors ?? []);
  if (op.access !== "public") for (const c of KEYED_ERRORS) codes.add(c);
  if (Array.isArray(op.access)) codes.add("insufficient_scope");
  if (op.idempotent) {
    codes.add("idempotency_key_reused");
    codes.add("idempotency_key_in_use");
  }
  return ERROR_CODES.filter((c) => codes.has(c));
}

function accessText(op: ApiOperation): string {
  if (op.access === "public") return "No API key needed.";
  if (op.access === "any") return "Any valid API key.";
  return `Scope: ${op.access.map((s) => `\`${s}\``).join(" or ")}.`;
}

const IDEMPOTENCY_TEXT =
  `Send an \`${IDEMPOTENCY_KEY_HEADER}\` (1..255 printable ASCII characters) to make retries safe: the same key with the ` +
  `same body replays the first response (with \`${IDEMPOTENT_REPLAYED_HEADER}: true\`) and creates nothing again; ` +
  `with a different body it is a 422 \`idempotency_key_reused\`; while the first request runs, a 409 ` +
  `\`idempotency_key_in_use\` with \`Retry-After\`. Keys are scoped to the company and kept ${IDEMPOTENCY_KEY_TTL_SECONDS / 3600} hours; ` +
  "4xx responses are replayed too, 429 and 5xx are not stored.";

const idempotencyKeyParam = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[\x20-\x7E]+$/)
  .meta({
    description: "Makes the create safe to retry (draft-ietf-httpapi-idempotency-key-header). 1..255 printable ASCII characters.",
    example: "zap-123-step-4-run-8c1f",
    param: { id: "IdempotencyKey" },
  });

function buildOperation(op: ApiOperation): ZodOpenApiOperationObject {
  const keyed = op.access !== "public";
  const idempotent = op.idempotent === true;
  const responses: Record<string, ZodOpenApiResponseObject> = {};
  for (const success of [op.success, ...(op.moreSuccess ?? [])]) {
    let successHeaders: Record<string, z.ZodType> = { [REQUEST_ID_HEADER]: requestIdHeader, ...(keyed ? rateLimitHeaders.shape : {}) };
    if (success.link) successHeaders.Link = linkHeader;
    if (success.location) successHeaders.Location = locationHeader;
    if (success.upsertResult) successHeaders[UPSERT_RESULT_HEADER] = upsertResultHeader(success.upsertResult);
    if (idempotent) successHeaders[IDEMPOTENT_REPLAYED_HEADER] = replayedHeader;
    // A deprecated list's Link carries both rel="next" and rel="deprecation"; the list's own Link schema stays.
    if (op.deprecated) successHeaders = { ...deprecationHeaderSchemas(op.deprecated.sunset !== undefined), ...successHeaders };
    responses[String(success.status)] = {
      description: success.description,
      headers: z.object(successHeaders),
      ...(success.body ? { content: { "application/json": { schema: success.body.schema, example: success.body.example } } } : {}),
    };
  }
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of operationErrorCodes(op)) {
    const status = PROBLEM_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  for (const [status, codes] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    responses[String(status)] = problemResponse(status, codes, keyed, idempotent, op.problemExtension);
  }

  const description = [op.description, accessText(op), idempotent ? IDEMPOTENCY_TEXT : undefined, op.deprecated ? deprecationText(op.deprecated) : undefined]
    .filter(Boolean)
    .join("\n\n");
  return {
    operationId: op.operationId,
    summary: op.summary,
    description,
    tags: [op.tag],
    ...(op.deprecated ? { deprecated: true } : {}),
    ...(op.access === "public" ? { security: [] } : {}),
    requestParams: {
      ...(op.path_params ? { path: op.path_params } : {}),
      ...(op.query ? { query: op.query } : {}),
      ...(idempotent ? { header: z.object({ [IDEMPOTENCY_KEY_HEADER]: idempotencyKeyParam.optional() }) } : {}),
    },
    ...(op.body
      ? { requestBody: { required: true, content: { "application/json": { schema: op.body.schema, example: op.body.example } } } }
      : {}),
    responses: responses as ZodOpenApiOperationObject["responses"],
  };
}

/** The document input for zod-openapi: info, security, tags, components and every operation of `operations`. */
function documentInput(operations: readonly ApiOperation[]): ZodOpenApiObject {
  const paths: NonNullable<ZodOpenApiObject["paths"]> = {};
  for (const op of operations) {
    paths[op.path] = { ...paths[op.path], [op.method]: buildOperation(op) };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Stageline external API",
      version: API_VERSION,
      summary: "Pipeline items, tasks and REST hooks for integration platforms.",
      description:
        "The external API of Stageline (`/v1/ext`). Authenticate every request with an API key in the `x-api-key` header " +
        "(or as `Authorization: Bearer <key>`), or with an OAuth 2.1 access token as `Authorization: Bearer <token>` issued for " +
        "the resource `<origin>/v1/ext` (its Protected Resource Metadata is at `/.well-known/oauth-protected-resource/v1/ext`); " +
        "a token carries the scopes the user granted and has its own rate limit per grant. A request without any credential " +
        "gets `401` with `WWW-Authenticate: Bearer resource_metadata=..., scope=...`; a token that expired, is unknown or was " +
        "issued for the other resource `401` with `error=\"invalid_token\"`, an `error_description` and the problem's " +
        "`token_error` saying which; a token lacking a scope `403` with `error=\"insufficient_scope\"` and the scope needed. " +
        "Errors are RFC 9457 problem details (`application/problem+json`) with a stable `code`. Every response carries " +
        "`Request-Id`, which problem bodies repeat as `request_id`: quote it to support or search for it in the console. Every keyed response carries " +
        `\`RateLimit-Limit\`, \`RateLimit-Remaining\` and \`RateLimit-Reset\` (${RATE_LIMIT.limit} requests per key, or per OAuth grant, per ${RATE_LIMIT.windowSeconds}-second window). ` +
        `Lists are newest first, \`limit\` 1..${MAX_PAGE_LIMIT}, and the next page's URL is in the \`Link: <...>; rel="next"\` header (keyset pagination).\n\n` +
        "Rules every request meets: no string, in the body, the path or the query, may contain U+0000 (400). Query values are " +
        "trimmed and a blank value counts as absent; lengths count after trimming. Cursors are opaque strings that only the " +
        "server issues. A method a path does not support is `405` with an `Allow` header and code `method_not_allowed`, " +
        "decided before the key is checked and not counted against the rate limit; `OPTIONS` answers with `Allow`.\n\n" +
        "Versioning: `/v1/ext/` changes only additively (new endpoints, optional request fields, response fields, headers, " +
        "event names, problem codes for new conditions); clients must ignore response fields they do not know. `info.version` " +
        "is the date of the newest entry of the API changelog. A deprecated operation is marked `deprecated` and its responses " +
        "carry `Deprecation`, `Sunset` (once set) and `Link: <...>; rel=\"deprecation\"`.",
      license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" },
    },
    servers: [{ url: "/", description: "This server" }],
    security: [{ [API_KEY_SCHEME]: [] }, { [OAUTH_TOKEN_SCHEME]: [] }],
    tags: Object.entries(API_TAGS).map(([name, description]) => ({ name, description })),
    paths,
    webhooks: webhookEventsSection(),
    components: {
      securitySchemes: {
        [API_KEY_SCHEME]: {
          type: "apiKey",
          in: "header",
          name: API_KEY_HEADER,
          description: "An API key of the company (Company Settings, API Keys). Each key carries scopes.",
        },
        [OAUTH_TOKEN_SCHEME]: {
          type: "http",
          scheme: "bearer",
          description:
            "An OAuth 2.1 access token (1 hour) for the resource `<origin>/v1/ext` (RFC 8707), from the authorization server " +
            "at the server's origin (`/.well-known/oauth-authorization-server`); it carries the API scopes the user granted " +
            "(`offline_access` only asks for a refresh token). A token for the MCP endpoint is refused here.",
        },
      },
      schemas: {
        Item: ItemSchema,
        DuplicateMatch: DuplicateMatchSchema,
        Task: TaskSchema,
        Note: NoteSchema,
        Pipeline: PipelineSchema,
        Stage: StageSchema,
        Status: StatusSchema,
        PipelineField: PipelineFieldSchema,
        // Delivery bodies of update events (`webhooks` below; CONTRACT "Previous values in update events").
        ...EVENT_PAYLOAD_COMPONENTS,
        WebhookSubscription: WebhookSubscriptionSchema,
        WebhookSubscriptionCreated: WebhookSubscriptionCreatedSchema,
        WebhookDelivery: WebhookDeliverySchema,
        Me: MeSchema,
        ProblemFieldError: ProblemFieldErrorSchema,
      },
    },
  };
}

let cached: { document: ReturnType<typeof createDocument>; json: string } | undefined;

/** The OpenAPI 3.1 document (built once per process). */
export function openApiDocument(): ReturnType<typeof createDocument> {
  cached ??= build();
  return cached.document;
}

/** The document as pretty-printed JSON with a trailing newline: what GET /v1/ext/openapi.json serves and docs/openapi.json holds. */
export function openApiJson(): string {
  cached ??= build();
  return cached.json;
}

function build(): { document: ReturnType<typeof createDocument>; json: string } {
  const document = buildOpenApiDocument(API_OPERATIONS);
  return { document, json: `${JSON.stringify(document, null, 2)}\n` };
}

/**
 * The OpenAPI document of `operations` (the registry, or a test's own list, e.g. with a deprecated operation that
 * exists only in tests). Not cached; the served document is {@link openApiDocument}.
 */
export function buildOpenApiDocument(operations: readonly ApiOperation[]): ReturnType<typeof createDocument> {
  return createDocument(documentInput(operations));
}
