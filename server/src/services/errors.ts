/**
 * The services' errors: `DomainError` (from the contract, `@stageline/shared`) with a stable `code`, and shorthands for
 * raising one. Services throw them; each edge renders them in its own format (API: http/problem.ts as RFC 9457
 * problem details; console: an HTML page).
 */
import { DomainError, type ErrorCode, type ProblemExtras } from "@stageline/shared";

export { DomainError };

/** Shorthand: `throw domainError("version_conflict", "…", { current_version: 3 })`. */
export function domainError(code: ErrorCode, detail: string, extras: ProblemExtras = {}): DomainError {
  return new DomainError(code, detail, extras);
}

/**
 * `not_found` for a resource id that does not exist or belongs to another company (CONTRACT "Errors": 404 never
 * reveals other tenants' ids).
 */
export function notFound(resource: string, id: string): DomainError {
  return domainError("not_found", `${resource} ${id} was not found.`);
}
