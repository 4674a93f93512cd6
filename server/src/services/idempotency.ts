/**
 * Idempotency keys on creates (CONTRACT "Idempotency", draft-ietf-httpapi-idempotency-key-header): the domain side.
 * A create given an `IdempotencyClaim` stores its response in the same statement or transaction as the resource;
 * when the key already has a stored response it throws `StoredResponseFound` (the edge replays it, or answers 422
 * `idempotency_key_reused` when the request differs), and when another request holds the key, 409
 * `idempotency_key_in_use`.
 */
import { createHash } from "node:crypto";
import stringify from "safe-stable-stringify";
import { IDEMPOTENCY_KEY_TTL_SECONDS } from "@stageline/shared";
import type { PrismaClient, Prisma } from "../generated/prisma/client";
import { claimKey, purgeExpiredKeys, storeResponse, type IdempotencyClaim, type ResponseToStore, type StoredResponse } from "../db/idempotency";
import { DomainError, domainError } from "./errors";
import { startPeriodicJob, untilNone, type PeriodicJob } from "./periodic-job";

export type { IdempotencyClaim, ResponseToStore, StoredResponse } from "../db/idempotency";

/** Seconds a client is told to wait (`Retry-After`) when its key is in use. */
export const IN_USE_RETRY_AFTER_SECONDS = 1;

/** Thrown by a create when its key already has a stored response: the edge replays it (or answers 422). */
export class StoredResponseFound extends Error {
  constructor(readonly stored: StoredResponse) {
    super("A response is stored for this idempotency key.");
    this.name = "StoredResponseFound";
  }
}

/** 409 `idempotency_key_in_use` (the edge adds `Retry-After`). */
export function keyInUse(): DomainError {
  return domainError(
    "idempotency_key_in_use",
    `A request with this Idempotency-Key is still being processed. Retry after ${IN_USE_RETRY_AFTER_SECONDS} second.`,
  );
}

/** 422 `idempotency_key_reused`. */
export function keyReused(): DomainError {
  return domainError(
    "idempotency_key_reused",
    "This Idempotency-Key was already used with a different request (method, path or body). Use a new key for a new request.",
  );
}

/**
 * The fingerprint of a request (CONTRACT: bodies "compared after JSON parsing"): SHA-256 (hex) of the method, the
 * path and the body as canonical JSON (keys sorted), so whitespace and key order do not matter.
 */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  return createHash("sha256").update(`${method.toUpperCase()} ${path}\n${stringify(body ?? null)}`).digest("hex");
}

/** The claim of a request of company `companyId` with key `key` (kept 24 hours). */
export function claimOf(companyId: string, key: string, requestHash: string): IdempotencyClaim {
  return { companyId, key, requestHash, ttlSeconds: IDEMPOTENCY_KEY_TTL_SECONDS };
}

/**
 * Runs `work` in one transaction that, given a claim, first takes the key (`claimKey`) and last stores the response
 * `respond(value)` (`storeResponse`), so the resource and its stored response commit together or not at all.
 * Without a claim it is a plain transaction.
 * @returns what `work` returned.
 * @throws StoredResponseFound when the key already has a response; DomainError 409 `idempotency_key_in_use` while
 *   another request holds it; whatever `work` throws (nothing is written then).
 */
export function inIdempotentTransaction<T>(
  prisma: PrismaClient,
  claim: IdempotencyClaim | undefined,
  work: (tx: Prisma.TransactionClient) => Promise<T>,
  respond: (value: T) => ResponseToStore,
): Promise<T> {
  return prisma.$transaction(async (tx) => {
    if (claim) {
      const outcome = await claimKey(tx, claim);
      if (outcome.kind === "in_use") throw keyInUse();
      if (outcome.kind === "stored") throw new StoredResponseFound(outcome.stored);
    }
    const value = await work(tx);
    if (claim) await storeResponse(tx, claim, respond(value));
    return value;
  });
}

/** How often expired keys are purged (they are ignored by lookups from the moment they expire). */
export const PURGE_INTERVAL_MS = 10 * 60 * 1000;

/**
 * Purges expired idempotency keys (CONTRACT "Idempotency": kept 24 hours) now and then every `intervalMs`, in the
 * background (the timer does not keep the process alive). A failed purge is logged and tried again next time.
 * @returns `stop`, which cancels the timer and waits for a purge in progress.
 */
export function startIdempotencyPurge(prisma: PrismaClient, onError: (err: unknown) => void, intervalMs: number = PURGE_INTERVAL_MS): PeriodicJob {
  return startPeriodicJob(() => untilNone(() => purgeExpiredKeys(prisma)), onError, intervalMs);
}
