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

/**
 * Wraps a create route with the `Idempotency-Key` behaviour above. `create` gets the claim (undefined without the
 * header) and must hand it to the service, which stores the response in the create's own statement or transaction.
 */
export function idempotentCreate(
  ctx: AppContext,
  create: (req: Request, claim: IdempotencyClaim | undefined) => Promise<CreatedResponse>,
): RequestHandler {
  if (!held.has(ctx)) held.set(ctx, new Set());
  const running = held.get(ctx)!;
  return async (req, res) => {
    const key = req.header(IDEMPOTENCY_KEY_HEADER);
    if (key === undefined) return send(res, await create(req, undefined));
    if (!isIdempotencyKey(key)) {
      const message = "Idempotency-Key must be 1 to 255 printable ASCII characters (letters, digits, punctuation, spaces).";
      throw domainError("validation_failed", `The ${IDEMPOTENCY_KEY_HEADER} header is invalid.`, {
        errors: [{ path: IDEMPOTENCY_KEY_HEADER, message }],
      });
    }
    const companyId = authOf(req).company.id;
    const claim = claimOf(companyId, key, requestFingerprint(req.method, req.baseUrl + req.path, req.body));
    const slot = `${companyId}\n${key}`;
    if (running.has(slot)) return inUse(res);
    running.add(slot);
    try {
      return send(res, await create(req, claim));
    } catch (err) {
      if (err instanceof StoredResponseFound) return replay(res, claim, err.stored);
      if (err instanceof DomainError && err.code === "idempotency_key_in_use") return inUse(res);
      if (err instanceof DomainError && isStorable(err)) {
        const body = JSON.stringify(createProblem(err.code, err.detail, err.extras, err.status));
        const stored = await storeFailureOrRead(ctx.prisma, claim, { status: err.status, body, location: null });
        if (stored) return replay(res, claim, stored);
      }
      throw err;
    } finally {
      running.delete(slot);
    }
  };
}

/** CONTRACT "Idempotency": 4xx responses are stored and replayed, except 429 and the idempotency codes themselves. */
function isStorable(err: DomainError): boolean {
  return err.status >= 400 && err.status < 500 && err.status !== 429 && err.code !== "idempotency_key_reused";
}

function send(res: Response, created: CreatedResponse): void {
  if (created.location) res.location(created.location);
  for (const [name, value] of Object.entries(created.headers ?? {})) res.setHeader(name, value);
  res.status(created.status).json(created.body);
}

function inUse(res: Response): never {
  res.setHeader(RETRY_AFTER_HEADER, String(IN_USE_RETRY_AFTER_SECONDS));
  throw keyInUse();
}

/**
 * Replays `stored` (status, body text, `Location`, stored headers) with `Idempotent-Replayed: true`, or 422 when the
 * request differs.
 */
function replay(res: Response, claim: IdempotencyClaim, stored: StoredResponse): void {
  if (stored.requestHash !== claim.requestHash) throw keyReused();
  if (stored.location) res.setHeader("Location", stored.location);
  for (const [name, value] of Object.entries(stored.headers ?? {})) res.setHeader(name, value);
  res.setHeader(IDEMPOTENT_REPLAYED_HEADER, "true");
  res.status(stored.status).type(stored.status >= 400 ? PROBLEM_CONTENT_TYPE : "application/json").send(stored.body);
}
