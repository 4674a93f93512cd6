/**
 * What the service answers while its database cannot be reached (CONTRACT "Errors": `503 service_unavailable` with
 * `Retry-After`, never a `500`; issue 39): the policy (how long a client is asked to wait) and the DomainError every
 * edge renders in its own format (API: problem details; MCP: the same at the HTTP level, an `isError` tool result
 * inside a call; console and OAuth: a 503 page or OAuth error). Which errors count as "cannot be reached" is decided
 * by db/unreachable.ts alone.
 */
import { DomainError } from "@stageline/shared";
import { isDatabaseUnreachable } from "../db/unreachable";

/**
 * Seconds a client is asked to wait (`Retry-After`) before trying again. Short: a restarted or failed-over
 * PostgreSQL is usually back within seconds, and @stageline/client backs off further on each retry anyway.
 */
export const OUTAGE_RETRY_AFTER_SECONDS = 5;

/** The `detail` of every outage answer (no driver text: it may name hosts, and the answer is public). */
export const OUTAGE_DETAIL = `The service cannot reach its database just now. Retry after ${OUTAGE_RETRY_AFTER_SECONDS} seconds.`;

/** `503 service_unavailable` (CONTRACT "Errors"). */
export function serviceUnavailable(): DomainError {
  return new DomainError("service_unavailable", OUTAGE_DETAIL);
}

/**
 * The `service_unavailable` DomainError for `err` when it is one already or means the database cannot be reached
 * (db/unreachable.ts), else undefined (the caller answers as before: its own code, or a 500).
 */
export function outageOf(err: unknown): DomainError | undefined {
  if (err instanceof DomainError) return err.code === "service_unavailable" ? err : undefined;
  return isDatabaseUnreachable(err) ? serviceUnavailable() : undefined;
}
