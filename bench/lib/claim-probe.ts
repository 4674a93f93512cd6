/**
 * The cost of the webhook dispatcher's claim (issue 17, `backlog` phase), measured on a PostgreSQL benchmark schema
 * without changing it: the server's own `claimDueDeliveries` (server/dist/db/webhook-dispatch.js, built by
 * `npm run bench`) is called directly from this process, each call inside a transaction that is rolled back, so no
 * lease is taken and the running server's dispatcher is not disturbed beyond the row locks of one call.
 *
 * The function reaches the database through the server's raw SQL path (db/sql.ts: `query(prisma, ...)` and
 * `sqlOf(prisma).transaction(fn)`, which look the runner up by the Prisma client). The probe registers a stand-in
 * client whose runner sends every statement to one `pg` connection of its own (a claim's own transaction becomes
 * part of the probe's rolled-back one) and records the statement text and parameters; `$queryRawUnsafe` and
 * `$executeRawUnsafe` are routed there too. The statements of the call that issued the most are then run in order
 * under `EXPLAIN (ANALYZE, BUFFERS)`, again inside a rolled-back transaction.
 *
 * The claim's options are an idle dispatcher's full claim with the defaults (server/src/webhooks/dispatcher.ts: at
 * most 32 queues per lane per claim, a window of 128 due probation queues for fair share, WEBHOOK_BATCH_SIZE 8,
 * WEBHOOK_LEASE_MS 30000; the fair share itself left at its default, the first due queues). Figures measured before the
 * lanes (commit dbf4b08) passed `{ limit: 16 }`, that dispatcher's free slots. A new claim signature changes only
 * `CLAIM_OPTIONS`.
 */
import path from "node:path";
import type { PoolClient } from "pg";
import { openPgPool } from "./db";
import { nowMs } from "./receiver";
import { REPO_ROOT } from "./server-process";

/**
 * Options passed to `claimDueDeliveries`: a full claim of an idle dispatcher with the default settings (the
 * dispatcher claims at most 32 queues per lane per call, and shows fair share 4 due probation queues per slot).
 */
export const CLAIM_OPTIONS = {
  ownerId: "stageline-bench:claim-probe",
  lanes: { healthy: 32, probation: 32 },
  healthyWindow: 128,
  probationWindow: 128,
  leaseMs: 30_000,
  batchSize: 8,
} as const;

export interface ClaimProbeResult {
  /** Milliseconds of each timed call (the call only, not BEGIN/ROLLBACK), in call order. */
  timesMs: number[];
  /** Deliveries the calls returned (claimable heads and their batches), per call. */
  claimed: number[];
  /** `EXPLAIN (ANALYZE, BUFFERS)` text of each statement one call issued. */
  plans: string[];
  /** "Execution Time" of each plan, ms (NaN when absent). */
  executionMs: number[];
  /** Number of statements one call issued. */
  statements: number;
  /** Calls not made because the time budget ran out or a call exceeded the statement timeout. */
  skipped: number;
  /** A call was cancelled by the statement timeout (its time is then `timeoutMs`, a lower bound). */
  timedOut: boolean;
  /** The statement timeout of the probe's connection, ms. */
  timeoutMs: number;
  /** Calls repeated because PostgreSQL broke a deadlock with the running dispatcher (not timed). */
  deadlocks: number;
}

/** One SQL statement with its parameters. */
export interface Recorded {
  text: string;
  params: readonly unknown[];
}

type ClaimFn = (prisma: unknown, options: typeof CLAIM_OPTIONS) => Promise<unknown[]>;

function loadServerModules(): { claim: ClaimFn; registerSqlRunner: (prisma: unknown, runner: unknown) => void } {
  const dist = path.join(REPO_ROOT, "server/dist/db");
  const dispatch = require(path.join(dist, "webhook-dispatch.js")) as { claimDueDeliveries?: unknown };
  const sql = require(path.join(dist, "sql.js")) as { registerSqlRunner?: unknown };
  if (typeof dispatch.claimDueDeliveries !== "function") throw new Error("server/dist/db/webhook-dispatch.js exports no claimDueDeliveries (run npm run build; or the claim was renamed: see bench/lib/claim-probe.ts)");
  if (typeof sql.registerSqlRunner !== "function") throw new Error("server/dist/db/sql.js exports no registerSqlRunner");
  return { claim: dispatch.claimDueDeliveries as ClaimFn, registerSqlRunner: sql.registerSqlRunner as (prisma: unknown, runner: unknown) => void };
}

/** A stand-in Prisma client whose raw statements all go to `client`, recorded in `log`. */
function stubPrisma(client: PoolClient, log: Recorded[], registerSqlRunner: (prisma: unknown, runner: unknown) => void): unknown {
  const run = async (text: string, params: readonly unknown[] = []) => {
    log.push({ text, params });
    return (await client.query(text, params as unknown[])).rows;
  };
  const prisma: Record<string, unknown> = {
    $queryRawUnsafe: (text: string, ...params: unknown[]) => run(text, params),
    $executeRawUnsafe: async (text: string, ...params: unknown[]) => (await client.query(text, params)).rowCount ?? 0,
  };
  prisma.$transaction = async (fn: (tx: unknown) => Promise<unknown>) => fn(prisma);
  registerSqlRunner(prisma, {
    query: (text: string, params?: readonly unknown[]) => run(text, params),
    // Already inside the probe's transaction: the claim's statements run there, and are rolled back with it.
    transaction: (fn: (tx: (text: string, params?: readonly unknown[]) => Promise<unknown[]>) => Promise<unknown>) => fn(run),
  });
  return prisma;
}

/** PostgreSQL's SQLSTATE for a statement cancelled by `statement_timeout` (query_canceled). */
const QUERY_CANCELED = "57014";
/** SQLSTATE deadlock_detected: the probe's transaction was chosen as the victim against the server's dispatcher. */
const DEADLOCK_DETECTED = "40P01";
/** Retries of one call after deadlocks before the probe gives up. */
const MAX_DEADLOCK_RETRIES = 5;

/**
 * Times `calls` claims (each rolled back) on the schema of `databaseUrl`, then explains the statements of one claim.
 * Stops calling once `budgetMs` has passed (the remaining calls are counted in `skipped`), and every statement of
 * the probe runs under `statement_timeout = timeoutMs`, so a slow claim cannot hold the benchmark up: a call
 * cancelled by it ends the timed calls, and the plans are then shown without ANALYZE. `setup` statements run first
 * in each rolled-back transaction, untimed (e.g. making every queue due).
 * @throws when the server build is missing or the database refuses the connection.
 */
export async function probeClaim(databaseUrl: string, calls: number, budgetMs: number, timeoutMs: number, setup: Recorded[] = []): Promise<ClaimProbeResult> {
  const { claim, registerSqlRunner } = loadServerModules();
  const pool = await openPgPool(databaseUrl, 1);
  const client = await pool.connect();
  const log: Recorded[] = [];
  let explained: Recorded[] = [];
  const prisma = stubPrisma(client, log, registerSqlRunner);
  const result: ClaimProbeResult = { timesMs: [], claimed: [], plans: [], executionMs: [], statements: 0, skipped: 0, timedOut: false, timeoutMs, deadlocks: 0 };
  const cancelled = (err: unknown) => (err as { code?: string }).code === QUERY_CANCELED;
  const deadlocked = (err: unknown) => (err as { code?: string }).code === DEADLOCK_DETECTED;
  try {
    await client.query(`SET statement_timeout = ${Math.round(timeoutMs)}`);
    const started = Date.now();
    for (let i = 0; i < calls; i++) {
      if (Date.now() - started > budgetMs || result.timedOut) {
        result.skipped = calls - i;
        break;
      }
      await client.query("BEGIN");
      try {
        for (const st of setup) await client.query(st.text, st.params as unknown[]);
        log.length = 0;
        const t0 = nowMs();
        const rows = await claim(prisma, CLAIM_OPTIONS);
        result.timesMs.push(nowMs() - t0);
        result.claimed.push(rows.length);
      } catch (err) {
        if (deadlocked(err) && result.deadlocks < MAX_DEADLOCK_RETRIES * calls) {
          result.deadlocks++;
          i--; // the same call again, after the rollback below
          continue;
        }
        if (!cancelled(err)) throw err;
        result.timedOut = true;
        result.timesMs.push(timeoutMs);
      } finally {
        await client.query("ROLLBACK");
      }
      // Explain the fullest call (a claim that found nothing due may stop after its first statement).
      if (log.length >= explained.length) explained = [...log];
    }
    result.statements = explained.length;
    const explainAll = async (options: string) => {
      const plans: string[] = [];
      await client.query("BEGIN");
      try {
        for (const st of setup) await client.query(st.text, st.params as unknown[]);
        for (const s of explained) {
          const rows = (await client.query<{ "QUERY PLAN": string }>(`EXPLAIN (${options}) ${s.text}`, s.params as unknown[])).rows;
          plans.push(rows.map((r) => r["QUERY PLAN"]).join("\n"));
        }
      } finally {
        await client.query("ROLLBACK");
      }
      return plans;
    };
    let plans: string[] | null = null;
    for (let attempt = 0; !result.timedOut && plans === null; attempt++) {
      try {
        plans = await explainAll("ANALYZE, BUFFERS"); // in order: each statement sees what the previous one did
      } catch (err) {
        if (deadlocked(err) && attempt < MAX_DEADLOCK_RETRIES) continue;
        if (!cancelled(err)) throw err;
        break;
      }
    }
    plans ??= (await explainAll("COSTS")).map((p) => `(not analyzed: the claim exceeded the ${timeoutMs / 1000} s statement timeout; estimated plan)\n${p}`);
    result.plans = plans;
    result.executionMs = plans.map((p) => {
      const m = /Execution Time: ([\d.]+) ms/.exec(p);
      return m ? Number(m[1]) : NaN;
    });
  } finally {
    client.release();
    await pool.end();
  }
  return result;
}

/** The first `Buffers:` line of a plan (the top node's, i.e. the whole statement's), or "" when absent. */
export function topBuffers(plan: string): string {
  return /Buffers: ([^\n]+)/.exec(plan)?.[1]?.trim() ?? "";
}
