/**
 * The cost of the webhook dispatcher's claim (issue 17, `backlog` phase), measured on a PostgreSQL benchmark schema
 * without changing it: the server's own `claimDueDeliveries` (server/dist/db/webhook-dispatch.js, built by
 * `npm run bench`) is called directly from this process, each call inside a transaction that is rolled back, so no
 * lease is taken and the running server's dispatcher is not disturbed beyond the row locks of one call.
 *
 * The function reaches the database through the server's raw SQL path (db/sql.ts `query(prisma, ...)`, which looks
 * the runner up by the Prisma client). The probe registers a stand-in client whose runner sends every statement to
 * one `pg` connection of its own and records the statement text and parameters; `$queryRawUnsafe` and
 * `$executeRawUnsafe` are routed there too, so a claim written with Prisma's raw calls is measured the same way.
 * The recorded statements are then run under `EXPLAIN (ANALYZE, BUFFERS)`, again inside a rolled-back transaction.
 *
 * The claim's options are the dispatcher's defaults (server/src/webhooks/dispatcher.ts: WEBHOOK_CONCURRENCY 16 free
 * slots, WEBHOOK_BATCH_SIZE 8, WEBHOOK_LEASE_MS 30000). A new claim signature changes only `CLAIM_OPTIONS` and
 * `callClaim` below.
 */
import path from "node:path";
import type { PoolClient } from "pg";
import { openPgPool } from "./db";
import { nowMs } from "./receiver";
import { REPO_ROOT } from "./server-process";

/** Options passed to `claimDueDeliveries`: a full claim of an idle dispatcher with the default settings. */
export const CLAIM_OPTIONS = { ownerId: "stageline-bench:claim-probe", limit: 16, leaseMs: 30_000, batchSize: 8 } as const;

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
}

interface Recorded {
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
  registerSqlRunner(prisma, { query: (text: string, params?: readonly unknown[]) => run(text, params) });
  return prisma;
}

/** PostgreSQL's SQLSTATE for a statement cancelled by `statement_timeout` (query_canceled). */
const QUERY_CANCELED = "57014";

/**
 * Times `calls` claims (each rolled back) on the schema of `databaseUrl`, then explains the statements of one claim.
 * Stops calling once `budgetMs` has passed (the remaining calls are counted in `skipped`), and every statement of
 * the probe runs under `statement_timeout = timeoutMs`, so a slow claim cannot hold the benchmark up: a call
 * cancelled by it ends the timed calls, and the plans are then shown without ANALYZE.
 * @throws when the server build is missing or the database refuses the connection.
 */
export async function probeClaim(databaseUrl: string, calls: number, budgetMs: number, timeoutMs: number): Promise<ClaimProbeResult> {
  const { claim, registerSqlRunner } = loadServerModules();
  const pool = await openPgPool(databaseUrl, 1);
  const client = await pool.connect();
  const log: Recorded[] = [];
  const prisma = stubPrisma(client, log, registerSqlRunner);
  const result: ClaimProbeResult = { timesMs: [], claimed: [], plans: [], executionMs: [], statements: 0, skipped: 0, timedOut: false, timeoutMs };
  const cancelled = (err: unknown) => (err as { code?: string }).code === QUERY_CANCELED;
  try {
    await client.query(`SET statement_timeout = ${Math.round(timeoutMs)}`);
    const started = Date.now();
    for (let i = 0; i < calls; i++) {
      if (Date.now() - started > budgetMs || result.timedOut) {
        result.skipped = calls - i;
        break;
      }
      log.length = 0;
      await client.query("BEGIN");
      try {
        const t0 = nowMs();
        const rows = await claim(prisma, CLAIM_OPTIONS);
        result.timesMs.push(nowMs() - t0);
        result.claimed.push(rows.length);
      } catch (err) {
        if (!cancelled(err)) throw err;
        result.timedOut = true;
        result.timesMs.push(timeoutMs);
      } finally {
        await client.query("ROLLBACK");
      }
      result.statements = log.length;
    }
    const statements = [...log];
    for (const s of statements) {
      const explain = async (options: string) => {
        await client.query("BEGIN");
        try {
          return (await client.query<{ "QUERY PLAN": string }>(`EXPLAIN (${options}) ${s.text}`, s.params as unknown[])).rows.map((r) => r["QUERY PLAN"]).join("\n");
        } finally {
          await client.query("ROLLBACK");
        }
      };
      let plan: string;
      try {
        plan = result.timedOut ? "" : await explain("ANALYZE, BUFFERS");
      } catch (err) {
        if (!cancelled(err)) throw err;
        plan = "";
      }
      if (!plan) plan = `(not analyzed: the statement exceeded the ${timeoutMs / 1000} s statement timeout; estimated plan)\n${await explain("COSTS")}`;
      result.plans.push(plan);
      const m = /Execution Time: ([\d.]+) ms/.exec(plan);
      result.executionMs.push(m ? Number(m[1]) : NaN);
    }
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
