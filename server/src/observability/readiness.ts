/**
 * Readiness (issue 17, `GET /readyz`): the server can serve requests when its database answers and has every
 * migration of this build applied. Both checks together must answer within `READINESS_TIMEOUT_MS`, so a hung
 * database makes the probe say "not ready" instead of hanging it.
 */
import type { Logger } from "pino";
import type { Database } from "../db/database";
import { unappliedMigrations } from "../db/migrations";
import { pingDatabase } from "../db/readiness";
import { isDatabaseUnreachable } from "../db/unreachable";
import { DeadlineExceeded, within } from "./deadline";

/** The readiness checks' time limit, in milliseconds (well under the usual 5-10 s probe timeouts). */
export const READINESS_TIMEOUT_MS = 2_000;

/** The outcome of each check. `skipped`: not run because the database did not answer. */
export interface ReadinessChecks {
  database: "ok" | "unreachable" | "timeout";
  migrations: "ok" | "pending" | "unreadable" | "timeout" | "skipped";
}

/**
 * The `detail` when the check's error means the database cannot be reached (db/unreachable.ts). No driver text: the
 * probe is public; the log has the error.
 */
export const UNREACHABLE_DETAIL =
  "The database cannot be reached: the connection was refused or lost. API requests answer 503 service_unavailable until it is back.";

/** `ready` and why not, in words an operator can act on (no error text from the driver: the probe is public). */
export interface Readiness {
  ready: boolean;
  checks: ReadinessChecks;
  /** One sentence; for the response's `detail`. */
  detail: string;
}

/**
 * Runs the checks: `SELECT 1`, then the applied migrations against this build's `server/prisma/migrations`.
 * Never throws; failures are logged at warn level with the driver's error.
 */
export async function checkReadiness(db: Database, logger: Logger, timeoutMs: number = READINESS_TIMEOUT_MS): Promise<Readiness> {
  const checks: ReadinessChecks = { database: "unreachable", migrations: "skipped" };
  const deadline = Date.now() + timeoutMs;
  try {
    await within(pingDatabase(db), timeoutMs);
    checks.database = "ok";
  } catch (err) {
    checks.database = err instanceof DeadlineExceeded ? "timeout" : "unreachable";
    logger.warn({ err }, "readiness: the database did not answer");
    let detail = checks.database === "timeout" ? `The database did not answer within ${timeoutMs} ms.` : "The database cannot be reached.";
    // The same test that turns API answers into 503 service_unavailable (db/unreachable.ts) says why, when it knows.
    if (isDatabaseUnreachable(err)) detail = UNREACHABLE_DETAIL;
    return { ready: false, checks, detail };
  }
  try {
    const pending = await within(unappliedMigrations(db), Math.max(1, deadline - Date.now()));
    if (pending.length) {
      checks.migrations = "pending";
      return { ready: false, checks, detail: `${pending.length} migration(s) of this build are not applied to the database.` };
    }
    checks.migrations = "ok";
  } catch (err) {
    checks.migrations = err instanceof DeadlineExceeded ? "timeout" : "unreadable";
    logger.warn({ err }, "readiness: the applied migrations could not be read");
    return { ready: false, checks, detail: "The database's migration history cannot be read." };
  }
  return { ready: true, checks, detail: "Ready." };
}
