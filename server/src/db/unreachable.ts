/**
 * The one place that decides whether an error means "the database cannot be reached" (CONTRACT "Errors": `503
 * service_unavailable` with `Retry-After` while the database cannot be reached, never a `500`; issue 39). Every edge
 * asks this module (through services/database-outage.ts) before it answers a `500 internal`, and `/readyz` asks it
 * why its check failed.
 *
 * Unreachable means: the connection could not be made or was lost, or the server said it is shutting down or not
 * accepting connections yet. Anything else (a constraint violation, a syntax error, a type error, a bug) is not, and
 * stays a 500 or its own code. The shapes recognised, found anywhere in the error's chain (`cause`,
 * Prisma's `meta.driverAdapterError`, an AggregateError's `errors`):
 * - Node socket errors: `ECONNREFUSED`, `ECONNRESET`, `ECONNABORTED`, `EPIPE`, `ETIMEDOUT`, `EHOSTUNREACH`,
 *   `ENETUNREACH`, `ENOTFOUND`, `EAI_AGAIN` (node-postgres passes them on as they are);
 * - PostgreSQL SQLSTATE class `08` (connection exception) and `57P01` admin_shutdown, `57P02` crash_shutdown,
 *   `57P03` cannot_connect_now (PostgreSQL manual, Appendix A), as node-postgres' DatabaseError `code` or Prisma's
 *   driver-adapter error (`cause.kind` `postgres` with `code`/`originalCode`);
 * - Prisma's driver-adapter kinds `DatabaseNotReachable`, `ConnectionClosed`, `SocketTimeout` (@prisma/adapter-pg
 *   maps the socket errors above to them; Prisma then raises P1001, P1017, P1008, or P2010 for a raw query, with the
 *   adapter error as `meta.driverAdapterError`) and the Prisma codes P1001, P1002, P1008, P1017;
 * - node-postgres' errors that carry no code, by their exact message: "Connection terminated unexpectedly" (the
 *   socket ended under a query), "Connection terminated due to connection timeout", "Client has encountered a
 *   connection error and is not queryable", and pg-pool's "timeout exceeded when trying to connect".
 * Shutting the pool down ourselves ("Connection terminated", "Cannot use a pool after calling end on the pool") is
 * not an outage. PGlite runs in the process and cannot go away, so none of its errors match.
 */

/** Node's socket error codes of a connection that could not be made or was lost. */
const SOCKET_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/** SQLSTATEs of class 57 that mean the server is going away or not accepting connections yet. */
const SHUTDOWN_SQLSTATES: ReadonlySet<string> = new Set(["57P01", "57P02", "57P03"]);

/** Prisma's error codes for a database that cannot be reached (P1001, P1002), timed out (P1008) or closed the connection (P1017). */
const PRISMA_CODES: ReadonlySet<string> = new Set(["P1001", "P1002", "P1008", "P1017"]);

/** The driver-adapter error kinds (@prisma/driver-adapter-utils) of the same. */
const ADAPTER_KINDS: ReadonlySet<string> = new Set(["DatabaseNotReachable", "ConnectionClosed", "SocketTimeout"]);

/** node-postgres and pg-pool messages of a lost or impossible connection (these errors have no `code`). */
const DRIVER_MESSAGES: ReadonlySet<string> = new Set([
  "Connection terminated unexpectedly",
  "Connection terminated due to connection timeout",
  "Client has encountered a connection error and is not queryable",
  "timeout exceeded when trying to connect",
]);

/** How deep the chain of causes is followed (a guard against cycles and pathological nesting). */
const MAX_DEPTH = 6;

/** Whether `code` is a SQLSTATE that means the connection is lost or the server unavailable. */
function isUnreachableSqlState(code: string): boolean {
  return (/^08[0-9A-Z]{3}$/.test(code)) || SHUTDOWN_SQLSTATES.has(code);
}

/** Whether this one error object (not its causes) says the database cannot be reached. */
function saysUnreachable(e: Record<string, unknown>): boolean {
  const code = e.code;
  if (typeof code === "string") {
    if (SOCKET_CODES.has(code) || PRISMA_CODES.has(code) || isUnreachableSqlState(code)) return true;
  }
  if (typeof e.originalCode === "string" && isUnreachableSqlState(e.originalCode)) return true;
  if (typeof e.kind === "string" && ADAPTER_KINDS.has(e.kind)) return true;
  return code === undefined && typeof e.message === "string" && DRIVER_MESSAGES.has(e.message);
}

/** The errors `e` wraps: its `cause`, Prisma's `meta.driverAdapterError`, an AggregateError's `errors`. */
function wrapped(e: Record<string, unknown>): unknown[] {
  const inner: unknown[] = [e.cause];
  const meta = e.meta;
  if (meta !== null && typeof meta === "object") inner.push((meta as Record<string, unknown>).driverAdapterError);
  if (Array.isArray(e.errors)) inner.push(...e.errors.slice(0, 10));
  return inner;
}

/**
 * Whether `err` means the database cannot be reached (the shapes listed above, anywhere in its chain of causes).
 * Never throws; false for anything else, including non-objects.
 */
export function isDatabaseUnreachable(err: unknown): boolean {
  const seen = new Set<unknown>();
  const visit = (e: unknown, depth: number): boolean => {
    if (e === null || typeof e !== "object" || depth > MAX_DEPTH || seen.has(e)) return false;
    seen.add(e);
    const record = e as Record<string, unknown>;
    return saysUnreachable(record) || wrapped(record).some((inner) => visit(inner, depth + 1));
  };
  return visit(err, 0);
}
