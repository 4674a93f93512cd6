/**
 * The `Idempotency-Key` request header on creates (CONTRACT "Idempotency", draft-ietf-httpapi-idempotency-key-header),
 * the HTTP side: `idempotentCreate` wraps a create route. Without the header the route runs as usual. With it:
 * - a malformed key (not 1..255 printable ASCII) is a 400 `validation_failed`;
 * - a key already held by a running request of this process, or (on PostgreSQL) of another process, is a 409
 *   `idempotency_key_in_use` with `Retry-After`;
 * - the create stores its response in its own statement or transaction (services/idempotency.ts); a stored response
 *   with the same request fingerprint is replayed as it was (status, body, `Location`) with
 *   `Idempotent-Replayed: true`, with a different one it is a 422 `idempotency_key_reused`;
 * - a 4xx the create answers (400, 422) is stored and replayed too; 429 and 5xx are not stored;
 * - headers the create answers with (`CreatedResponse.headers`, e.g. `Stageline-Upsert`) are replayed too.
 */
import type { Request, RequestHandler, Response } from "express";
import {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENT_REPLAYED_HEADER,
  PROBLEM_CONTENT_TYPE,
  RETRY_AFTER_HEADER,
  createProblem,
  isIdempotencyKey,
} from "@stageline/shared";
import type { AppContext } from "../context";
import { storeFailureOrRead } from "../db/idempotency";
import { DomainError, domainError } from "../services/errors";
import {
  IN_USE_RETRY_AFTER_SECONDS,
  StoredResponseFound,
  claimOf,
  keyInUse,
  keyReused,
  requestFingerprint,
  type IdempotencyClaim,
  type StoredResponse,
} from "../services/idempotency";
import { authOf } from "./auth";

/** What a create route answers: status, JSON body, optional `Location` and other headers (replayed alike). */
export interface CreatedResponse {
  status: number;
  body: unknown;
  location?: string;
  /** Extra response headers, e.g. the upsert's `Stageline-Upsert`; the service stores them with the response. */
  headers?: Record<string, string>;
}

/** The (company, key) pairs held by running requests, per app (a key is the company's across all create routes). */
const held = new WeakMap<AppContext, Set<string>>();

/** What an idempotent create came to: a new resource, or the stored response of the key's first request. */
export type IdempotentOutcome = { created: CreatedResponse; stored?: undefined } | { created?: undefined; stored: StoredResponse };

/**
 * Runs `create` under the idempotency key `key` of `companyId` (CONTRACT "Idempotency"), for any edge: the REST
 * routes below and the MCP tools (server/src/mcp), so a key means the same everywhere. The request fingerprint is
 * (`method`, `path`, `body`), `path` being the REST path of the create (e.g. `/v1/ext/items`).
 * @returns the new resource, or the stored response to replay (a 4xx the create answered is stored too).
 * @throws DomainError `idempotency_key_in_use` (409) while another request holds the key, `idempotency_key_reused`
 * (422) when the stored request differs, and any other error of `create` that is not stored.
 */
export async function createIdempotently(
  ctx: AppContext,
  companyId: string,
  key: string,
  request: { method: string; path: string; body: unknown },
  create: (claim: IdempotencyClaim) => Promise<CreatedResponse>,
): Promise<IdempotentOutcome> {
  if (!held.has(ctx)) held.set(ctx, new Set());
  const running = held.get(ctx)!;
  const claim = claimOf(companyId, key, requestFingerprint(request.method, request.path, request.body));
  const slot = `${companyId}\n${key}`;
  if (running.has(slot)) throw keyInUse();
  running.add(slot);
  try {
    return { created: await create(claim) };
  } catch (err) {
    if (err instanceof StoredResponseFound) return storedFor(claim, err.stored);
    if (err instanceof DomainError && isStorable(err)) {
      const body = JSON.stringify(createProblem(err.code, err.detail, err.extras, err.status));
      const stored = await storeFailureOrRead(ctx.prisma, claim, { status: err.status, body, location: null });
      if (stored) return storedFor(claim, stored);
    }
    throw err;
  } finally {
    running.delete(slot);
  }
}

/** `stored` when it answers the same request as `claim`; 422 `idempotency_key_reused` otherwise. */
function storedFor(claim: IdempotencyClaim, stored: StoredResponse): IdempotentOutcome {
  if (stored.requestHash !== claim.requestHash) throw keyReused();
  return { stored };
}

/**
 * Wraps a create route with the `Idempotency-Key` behaviour above. `create` gets the claim (undefined without the
 * header) and must hand it to the service, which stores the response in the create's own statement or transaction.
 */
export function idempotentCreate(
  ctx: AppContext,
  create: (req: Request, claim: IdempotencyClaim | undefined) => Promise<CreatedResponse>,
): RequestHandler {
  return async (req, res) => {
    const key = req.header(IDEMPOTENCY_KEY_HEADER);
    if (key === undefined) return send(res, await create(req, undefined));
    if (!isIdempotencyKey(key)) {
      const message = "Idempotency-Key must be 1 to 255 printable ASCII characters (letters, digits, punctuation, spaces).";
      throw domainError("validation_failed", `The ${IDEMPOTENCY_KEY_HEADER} header is invalid.`, {
        errors: [{ path: IDEMPOTENCY_KEY_HEADER, message }],
      });
    }
    const request = { method: req.method, path: req.baseUrl + req.path, body: req.body };
    try {
      const outcome = await createIdempotently(ctx, authOf(req).company.id, key, request, (claim) => create(req, claim));
      return outcome.created ? send(res, outcome.created) : replay(res, outcome.stored);
    } catch (err) {
      if (err instanceof DomainError && err.code === "idempotency_key_in_use") res.setHeader(RETRY_AFTER_HEADER, String(IN_USE_RETRY_AFTER_SECONDS));
      throw err;
    }
  };
}

/** CONTRACT "Idempotency": 4xx responses are stored and replayed, except 429 and the idempotency codes themselves. */
function isStorable(err: DomainError): boolean {
  return err.status >= 400 && err.status < 500 && err.status !== 429 && err.code !== "idempotency_key_reused" && err.code !== "idempotency_key_in_use";
}

function send(res: Response, created: CreatedResponse): void {
  if (created.location) res.location(created.location);
  for (const [name, value] of Object.entries(created.headers ?? {})) res.setHeader(name, value);
  if (created.status >= 400) res.type(PROBLEM_CONTENT_TYPE); // a 4xx answered as a value (a batch's 422 `batch_failed`), as replayed
  res.status(created.status).json(created.body);
}

/** Replays `stored` (status, body text, `Location`, stored headers) with `Idempotent-Replayed: true`. */
function replay(res: Response, stored: StoredResponse): void {
  if (stored.location) res.setHeader("Location", stored.location);
  for (const [name, value] of Object.entries(stored.headers ?? {})) res.setHeader(name, value);
  res.setHeader(IDEMPOTENT_REPLAYED_HEADER, "true");
  res.status(stored.status).type(stored.status >= 400 ? PROBLEM_CONTENT_TYPE : "application/json").send(stored.body);
}
