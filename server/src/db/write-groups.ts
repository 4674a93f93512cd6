/**
 * Group commit of a company's concurrent single writes (PostgreSQL): the writes of one kind that arrive while one of
 * the same kind and company is in flight in this process wait, then run together as ONE statement in one
 * transaction (`GroupedStatement.runGroup`) and commit with one WAL flush. Used by note creates (db/notes.ts).
 *
 * Why: every statement that writes an outbox event holds its company's event-order lock from its event insert
 * through its commit (db/outbox.ts `eventOrderLockCte`: what makes the events feed commit-ordered), so a company's
 * event-writing creates commit one at a time, each waiting for the previous one's WAL flush; measured on issue 30,
 * one company's note creates ran at 145-167 statements/s with the lock against 578-1,012 without it
 * (bench/results/issue30-notes.md). Grouping keeps the lock and its exact order and shares the flush instead: the
 * lock is held once per group, not once per write.
 *
 * Only as one statement: a group that ran its members' statements one by one in its transaction cost a round trip
 * each through the server's busy event loop while holding the lock, and was slower than no grouping (measured:
 * note creates 399 req/s one by one against 1,078 as one statement; item creates 0.516x their bare handler one by one
 * against 0.606x alone, so item creates are not grouped).
 *
 * What each write still gets (its caller cannot tell the difference):
 * - the same outcome rows as alone; its response is answered only after the group's COMMIT, so nothing is
 *   acknowledged before it is durable;
 * - nothing waits when nothing is in flight: a lane's first write runs alone, autocommitted, at once, and only the
 *   writes that arrive while it runs form the next group (up to `WRITE_GROUP_MAX`), and so on while writes keep
 *   arriving; a group of one runs alone too;
 * - when the group's transaction fails (a statement's error, which aborts it, or a deadlock PostgreSQL broke by
 *   failing it), it rolls back and each of its writes runs again alone, so one write's error is its own answer and
 *   never another's;
 * - no wait behind another write's row lock: the lane's writes lock their rows `NOWAIT` (`noWait`), and a write or
 *   group that finds a row locked (a delete in progress) leaves the lane and runs alone, waiting as it would have.
 *
 * Why holding a group's locks until its commit deadlocks nothing: the group statement takes, in a fixed order (the
 * company row, then the rows its members lock, sorted by id, all `NOWAIT`), every row lock it needs before the
 * event-order lock; so once a group holds the event-order lock it waits for no other lock.
 *
 * Not grouped: writes on PGlite (one connection: statements never overlap, so there is nothing to share), and writes
 * inside an enclosing transaction (db/sql.ts `inEnclosingTransaction`: batches, which group their own operations).
 * State is per process and per database: writes in other server processes form groups of their own, which the
 * event-order lock orders as it orders single writes.
 */
import type { PrismaClient } from "../generated/prisma/client";
import { insideEnclosingTransaction, sqlOf, type SqlRunner, type TransactionQuery } from "./sql";

/**
 * Most writes one group commits. A group holds its company's event-order lock for its statements and its commit
 * (about 0.3 ms per statement, then one flush), so other processes' writes of that company wait for at most one group.
 */
export const WRITE_GROUP_MAX = 32;

/** A statement whose concurrent runs for one company may share a transaction (see the module's docstring). */
export interface GroupedStatement {
  /** The prepared statement's name (db/sql.ts `QueryOptions.name`), also the lane's kind. */
  name: string;
  /** The statement's text; one row of outcome columns or more, as the caller reads them alone. */
  text: string;
  /**
   * The same statement with every row lock `NOWAIT` (`noWait(text)`), for the lane's lone write: when a row it needs
   * is locked (PostgreSQL error 55P03), that write leaves the lane and waits alone (`text`), so it never holds up the
   * company's other writes.
   */
  laneText: string;
  /**
   * Runs a group inside its transaction `q` as one statement: what each member's statement (its parameters in
   * `members`) would have written alone, in member order, taking every row lock the writes need before the
   * event-order lock, in a fixed order (the company row first, then its other rows sorted by id), each `NOWAIT`. A
   * locked row fails the group (55P03), whose members then run alone, outside the lane.
   * @returns each member's rows, as the statement alone would have returned them, in member order.
   */
  runGroup(q: TransactionQuery, companyId: string, members: readonly (readonly unknown[])[]): Promise<unknown[][]>;
}

/**
 * `text` with every `FOR KEY SHARE` row lock made `FOR KEY SHARE NOWAIT`: a row another transaction holds (a delete's
 * `FOR UPDATE`) fails the statement with 55P03 at once instead of waiting. The event-order lock (an advisory lock)
 * still waits: it is held only from an event insert to its commit.
 */
export function noWait(text: string): string {
  return text.replace(/FOR KEY SHARE(?! NOWAIT)/g, "FOR KEY SHARE NOWAIT");
}

/** PostgreSQL's `lock_not_available` (55P03): a `NOWAIT` row lock found the row locked. */
function isLockNotAvailable(err: unknown): boolean {
  return typeof err === "object" && err !== null && (err as { code?: unknown }).code === "55P03";
}

/** A write waiting for its lane's next group. */
interface Waiting {
  params: readonly unknown[];
  resolve(rows: unknown[]): void;
  reject(err: unknown): void;
}

/** The writes of one statement and company waiting while one of them (alone or a group) is in flight. */
interface Lane {
  waiting: Waiting[];
}

const lanesOf = new WeakMap<SqlRunner, Map<string, Lane>>();

/**
 * Runs `statement` with `params` for company `companyId`, grouped with the concurrent runs of the same statement for
 * the same company when the database allows (see the module's docstring), else alone.
 * @returns the statement's rows, after its transaction committed.
 * @throws the driver's error when the statement fails alone (nothing of it is written then).
 */
export async function runGrouped<T>(prisma: PrismaClient, statement: GroupedStatement, companyId: string, params: readonly unknown[]): Promise<T[]> {
  const runner = sqlOf(prisma);
  if (!runner.concurrent || insideEnclosingTransaction(prisma)) return runner.query<T>(statement.text, params, { name: statement.name });
  let lanes = lanesOf.get(runner);
  if (!lanes) lanesOf.set(runner, (lanes = new Map()));
  const key = `${statement.name}\u0000${companyId}`;
  const lane = lanes.get(key);
  if (lane) return new Promise<T[]>((resolve, reject) => lane.waiting.push({ params, resolve: resolve as (rows: unknown[]) => void, reject }));
  const opened: Lane = { waiting: [] };
  lanes.set(key, opened);
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    void drain(runner, lanes, key, opened, statement, companyId);
  };
  try {
    return await runner.query<T>(statement.laneText, params, { name: `${statement.name}-nowait` });
  } catch (err) {
    if (!isLockNotAvailable(err)) throw err;
    // A row it needs is locked (a delete in progress): the lane goes on without it, and it waits alone.
    release();
    return await runner.query<T>(statement.text, params, { name: statement.name });
  } finally {
    release();
  }
}

/**
 * Runs the lane's waiting writes in groups of up to WRITE_GROUP_MAX until none waits, then closes the lane. A write
 * or group that cannot run without waiting for a row lock, or whose group failed, runs alone outside the lane: the
 * lane does not wait for it.
 */
async function drain(runner: SqlRunner, lanes: Map<string, Lane>, key: string, lane: Lane, statement: GroupedStatement, companyId: string): Promise<void> {
  const alone = (m: Waiting) => void runner.query(statement.text, m.params, { name: statement.name }).then(m.resolve, m.reject);
  while (lane.waiting.length > 0) {
    const members = lane.waiting.splice(0, WRITE_GROUP_MAX);
    if (members.length === 1) {
      const m = members[0]!;
      try {
        m.resolve(await runner.query(statement.laneText, m.params, { name: `${statement.name}-nowait` }));
      } catch (err) {
        if (isLockNotAvailable(err)) alone(m);
        else m.reject(err);
      }
    } else if (!(await runGroup(runner, statement, companyId, members))) {
      members.forEach(alone);
    }
  }
  lanes.delete(key);
}

/**
 * Runs `members` in one transaction and answers each with its rows after the commit.
 * @returns false when the transaction failed and rolled back (nothing of it is written; nobody was answered).
 */
async function runGroup(runner: SqlRunner, statement: GroupedStatement, companyId: string, members: Waiting[]): Promise<boolean> {
  let results: unknown[][];
  try {
    results = await runner.transaction((q) => statement.runGroup(q, companyId, members.map((m) => m.params)));
  } catch {
    return false;
  }
  members.forEach((m, i) => m.resolve(results[i]!));
  return true;
}
