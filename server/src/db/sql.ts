/**
 * A tiny raw-SQL path for the hot endpoints (issue #4): one parameterized statement straight to the driver, on
 * both databases, without Prisma's query compiler. Values are always bound parameters (`$1`, `$2`, ...), never
 * spliced into the text.
 *
 * Type parsing is the same on both drivers for what the hot paths read: `timestamptz` → Date, `json`/`jsonb` →
 * parsed value, `int4` → number, `text[]` → string[], `bool` → boolean. `int8` differs (pg: string; PGlite: number),
 * so callers cast counts to `::int` or convert with `Number()`. Parameters: pass Date for timestamps and a JSON
 * string (with an explicit `::json`/`::jsonb` cast) for JSON columns; never pass a JS array or object for JSON.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { Prisma, PrismaClient } from "../generated/prisma/client";

/** Runs single statements outside any transaction (each one is atomic and autocommitted). */
export interface SqlRunner {
  /**
   * Whether statements run on several connections at once (PostgreSQL's pool: true), or one at a time on one
   * connection (PGlite: false). db/write-groups.ts groups commits only where they can overlap.
   */
  readonly concurrent: boolean;
  /**
   * Runs one statement with bound parameters.
   * @returns its rows (empty for statements without RETURNING).
   * @throws the driver's error (e.g. a constraint violation), unchanged.
   */
  query<T>(text: string, params?: readonly unknown[], options?: QueryOptions): Promise<T[]>;
  /**
   * Runs `fn` in one transaction (READ COMMITTED) on one connection: `BEGIN`, the statements `fn` sends through its
   * argument, then `COMMIT`, or `ROLLBACK` when `fn` throws. Each statement inside gets its own snapshot, which is
   * what a claim that first locks rows and then reads what they guard needs (db/webhook-dispatch.ts). Keep `fn`
   * short and free of network I/O: on PGlite every other statement waits for it.
   * @throws what `fn` or the driver threw (after the rollback).
   */
  transaction<R>(fn: (query: TransactionQuery) => Promise<R>): Promise<R>;
}

/**
 * One statement inside `SqlRunner.transaction`. `options.name` prepares it on the transaction's connection
 * (PostgreSQL; see `QueryOptions`): only `inEnclosingTransaction` passes names, for the services' hot statements.
 */
export type TransactionQuery = <T>(text: string, params?: readonly unknown[], options?: QueryOptions) => Promise<T[]>;

/** Per-statement options of `SqlRunner.query`. */
export interface QueryOptions {
  /**
   * Runs the statement as a named prepared statement on PostgreSQL: parsed once per pooled connection, and planned
   * once when PostgreSQL's plan cache finds a generic plan as good. For hot statements whose plan does not depend
   * on the parameter values. A name must always go with the same text. On PGlite too, outside a transaction
   * (db/pglite-statements.ts); a PGlite transaction's queries run unnamed.
   */
  name?: string;
}

const runners = new WeakMap<PrismaClient, SqlRunner>();

/** Called by `openDatabase`: links the Prisma client to the raw runner of the same database. */
export function registerSqlRunner(prisma: PrismaClient, runner: SqlRunner): void {
  runners.set(prisma, runner);
}

/**
 * The raw runner of the database `prisma` was opened on (every client comes from db/database.ts `openDatabase`).
 * @throws when `prisma` was not opened by `openDatabase` (a programming error).
 */
export function sqlOf(prisma: PrismaClient): SqlRunner {
  const runner = runners.get(prisma);
  if (!runner) throw new Error("sqlOf: this Prisma client was not opened by openDatabase()");
  const open = enclosing.getStore();
  return open?.runner === runner ? open.view : runner;
}

/** Whether the calling code runs inside `inEnclosingTransaction` on the database of `prisma`. */
export function insideEnclosingTransaction(prisma: PrismaClient): boolean {
  return enclosing.getStore()?.runner === runners.get(prisma);
}

/** The transaction `inEnclosingTransaction` opened, seen from the code it runs. */
interface EnclosingTransaction {
  runner: SqlRunner;
  view: SqlRunner;
}

const enclosing = new AsyncLocalStorage<EnclosingTransaction>();

/**
 * Runs `work` inside ONE transaction of the database of `prisma` (READ COMMITTED) that every raw statement `work`
 * sends through `sqlOf(prisma)` (`query`, `queryOne`, `run`, the services' one-statement writes) joins, so that code
 * written for autocommitted statements and short transactions runs unchanged as part of a larger unit (CONTRACT
 * "Batch writes": an atomic batch reuses the single-request services). Inside it:
 * - `sqlOf(prisma).query` runs on the enclosing transaction, a named statement (`QueryOptions.name`) prepared on its
 *   connection as outside (PostgreSQL: parsed once per pooled connection, so the operations of a batch after the
 *   first skip parsing and, once PostgreSQL settles on a generic plan, planning; a prepared statement outlives a
 *   rollback, and pg marks it prepared only when PostgreSQL parsed it);
 * - `sqlOf(prisma).transaction(fn)` runs `fn` under a SAVEPOINT of it: released when `fn` returns, rolled back to
 *   (and the error passed on) when it throws, so a nested transaction's failure undoes only its own statements.
 * `work` gets the enclosing transaction's `TransactionQuery` for statements of its own. Prisma ORM calls do NOT join
 * (on PGlite they would wait for this transaction for ever): code under `work` must use the raw runner only.
 * Statements run one at a time (the callers await each one).
 * @returns what `work` returned, after COMMIT. @throws what `work` threw, after ROLLBACK.
 */
export function inEnclosingTransaction<R>(prisma: PrismaClient, work: (q: TransactionQuery) => Promise<R>): Promise<R> {
  const runner = sqlOf(prisma);
  if (insideEnclosingTransaction(prisma)) throw new Error("inEnclosingTransaction: already inside one");
  return runner.transaction((q) => {
    let savepoints = 0;
    const view: SqlRunner = {
      concurrent: false,
      query: <T>(text: string, params: readonly unknown[] = [], options?: QueryOptions) => q<T>(text, params, options),
      transaction: async <T>(fn: (query: TransactionQuery) => Promise<T>) => {
        const name = `enclosed_${++savepoints}`;
        await q(`SAVEPOINT ${name}`);
        let result: T;
        try {
          result = await fn(q);
        } catch (err) {
          await q(`ROLLBACK TO SAVEPOINT ${name}`);
          throw err;
        }
        await q(`RELEASE SAVEPOINT ${name}`);
        return result;
      },
    };
    return enclosing.run({ runner, view }, () => work(q));
  });
}

/**
 * Where a statement runs: on the raw runner of a client (autocommitted), or inside an open
 * `SqlRunner.transaction` through its `TransactionQuery`.
 */
export type Executor = PrismaClient | TransactionQuery;

/**
 * Runs one statement on `db` (see `Executor`). Prepared-statement names (`options.name`) apply outside a
 * transaction only.
 * @returns its rows. @throws the driver's error, unchanged.
 */
export function run<T>(db: Executor, text: string, params: readonly unknown[] = [], options?: QueryOptions): Promise<T[]> {
  return typeof db === "function" ? db<T>(text, params) : query<T>(db, text, params, options);
}

/** Runs one statement on the database of `prisma`; see `SqlRunner.query`. */
export function query<T>(prisma: PrismaClient, text: string, params: readonly unknown[] = [], options?: QueryOptions): Promise<T[]> {
  return sqlOf(prisma).query<T>(text, params, options);
}

/** Like `query`, for statements that return at most one row: that row, or null. */
export async function queryOne<T>(
  prisma: PrismaClient,
  text: string,
  params: readonly unknown[] = [],
  options?: QueryOptions,
): Promise<T | null> {
  const rows = await sqlOf(prisma).query<T>(text, params, options);
  return rows[0] ?? null;
}

/**
 * Runs one statement through `tx` when given (inside an interactive Prisma transaction, where the raw runner must
 * not be used: on PGlite it would wait for that very transaction, on PostgreSQL it would take a second pooled
 * connection), else on the raw runner of `prisma`. Through `tx` the rows come from Prisma's raw query, so `int8`
 * reads as bigint there: select only columns whose types both paths parse alike.
 */
export function queryIn<T>(
  prisma: PrismaClient,
  tx: Prisma.TransactionClient | undefined,
  text: string,
  params: readonly unknown[] = [],
): Promise<T[]> {
  return tx ? tx.$queryRawUnsafe<T[]>(text, ...params) : query<T>(prisma, text, params);
}
