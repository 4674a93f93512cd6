/**
 * The match locks of an upsert (CONTRACT "Upsert (create or update, atomically)"): transaction-level advisory locks
 * keyed on (company, pipeline, normalized match key), taken inside the upsert's transaction BEFORE it looks for the
 * matching item, so that concurrent upserts that could match the same item run one after another, in every process
 * on one PostgreSQL database (advisory locks are the server's, not the connection's) and on PGlite alike.
 *
 * Why this is exact. A match key is one (field, normalized value) the pipeline's duplicate detection compares: text
 * trimmed (space, tab, CR, LF) and lower-cased by the database exactly as db/items.ts `duplicateCondition` compares it,
 * numbers and booleans as their JSON text (a string and a number never match each other there either).
 * - match "any": an item matches when ONE configured field equals. Two upserts whose bodies share no key can neither
 *   find nor make an item the other would match through a value it writes (an upsert writes only the values of its
 *   own body, and it holds the lock of every one of them), so they need no order between them; two that share a key
 *   take that key's lock, and the second one's match query (a new READ COMMITTED snapshot, after the wait) sees the
 *   first one's committed item. Each upsert takes the locks of every configured field its body carries, sorted by lock
 *   id in one statement, so two upserts that share several keys always take them in the same order: no deadlock.
 * - match "all": an item matches only when EVERY configured field equals, so the whole tuple is one key (one lock).
 * A 64-bit hash collision between two keys only makes unrelated upserts wait for each other: still exact.
 * The keys start with the company id: one company's upserts never wait for another's. No table or row is locked
 * here (the create and update statements lock the company and pipeline rows `FOR KEY SHARE` as usual).
 */
import type { TransactionQuery } from "./sql";

/** One value an upsert matches on, as db/items.ts `DuplicateCriterion` carries it. */
export interface MatchKey {
  field: string;
  value: string | number | boolean;
}

/** Characters trimmed before comparing text (the same set as db/items.ts `duplicateCondition`). */
const TRIM_CHARACTERS = " \t\r\n";

/** What the lock statement learned about the pipeline while taking the locks. */
export type LockedPipeline = "active" | "archived" | "missing";

/**
 * The lock ids of `keys` (see the module comment) as SQL: CTEs `parts` and `ids` (column `id` bigint, one row per
 * lock) whose placeholders start at `$<first>`, and their bound values in order.
 */
export function matchLockIds(
  companyId: string,
  pipelineId: string,
  match: "any" | "all",
  keys: MatchKey[],
  first = 1,
): { ctes: string; values: unknown[] } {
  const p = (n: number) => `$${first + n - 1}`;
  return {
    ctes: `parts AS (
       SELECT u.ord, u.f || chr(10) || u.k || chr(10) || CASE WHEN u.k = 's' THEN lower(btrim(u.v, ${p(7)})) ELSE u.v END AS part
       FROM unnest(${p(3)}::text[], ${p(4)}::text[], ${p(5)}::text[]) WITH ORDINALITY AS u(f, k, v, ord)
     ), ids AS (
       SELECT DISTINCT hashtextextended('upsert' || chr(10) || ${p(1)} || chr(10) || ${p(2)} || chr(10) || part, 0) AS id
       FROM parts WHERE ${p(6)} = 'any'
       UNION
       SELECT hashtextextended('upsert' || chr(10) || ${p(1)} || chr(10) || ${p(2)} || chr(10) || string_agg(part, chr(11) ORDER BY ord), 0)
       FROM parts WHERE ${p(6)} = 'all' HAVING count(*) > 0
     )`,
    values: [
      companyId,
      pipelineId,
      keys.map((k) => k.field),
      keys.map((k) => (typeof k.value === "string" ? "s" : "j")),
      keys.map((k) => (typeof k.value === "string" ? k.value : JSON.stringify(k.value))),
      match,
      TRIM_CHARACTERS,
    ],
  };
}

/**
 * Inside the upsert's open transaction `q`: takes (waiting as long as needed) the advisory locks of `keys` for
 * company `companyId` and pipeline `pipelineId` (one per key for match "any", one for the whole tuple for "all"; see
 * the module comment), in lock-id order, and in the same statement reads whether the company's pipeline exists and
 * is archived. The locks are held until the transaction ends. (The upsert's create path takes the same locks inside
 * its match statement instead: db/items.ts `insertItemUnlessMatchLocked`.)
 * @returns the pipeline's state ("missing" when it is not the company's).
 * @throws the driver's error (e.g. a lock timeout the operator configured).
 */
export async function lockMatchKeys(
  q: TransactionQuery,
  companyId: string,
  pipelineId: string,
  match: "any" | "all",
  keys: MatchKey[],
): Promise<LockedPipeline> {
  const ids = matchLockIds(companyId, pipelineId, match, keys);
  const rows = await q<{ locks: number; archived: boolean | null }>(
    `WITH ${ids.ctes}, taken AS MATERIALIZED (
       SELECT id, pg_advisory_xact_lock(id) AS locked FROM ids ORDER BY id
     )
     SELECT (SELECT count(*) FROM taken)::int AS locks,
       (SELECT p.archived_at IS NOT NULL FROM pipelines p WHERE p.id = $2 AND p.company_id = $1) AS archived`,
    ids.values,
  );
  return pipelineState(rows[0]?.archived);
}

/** The pipeline's state from `archived_at IS NOT NULL` of the company's pipeline (null or absent: no such pipeline). */
export function pipelineState(archived: boolean | null | undefined): LockedPipeline {
  return archived === null || archived === undefined ? "missing" : archived ? "archived" : "active";
}

/** One upsert of a group whose match locks `lockMatchKeysOfMany` takes. */
export interface MatchLockRequest {
  pipelineId: string;
  match: "any" | "all";
  keys: MatchKey[];
}

/**
 * Inside a transaction `q` that will run several upserts of company `companyId` (a non-atomic batch's group,
 * services/batch.ts `runGroup`): takes the match locks of all of them in ONE statement, in lock-id order (each lock
 * id exactly as `matchLockIds` computes it for that upsert), held until the transaction ends. Taking every lock
 * before the group writes anything is what keeps the group out of deadlocks: a transaction holding locks in the
 * group's order could otherwise wait for a later upsert's key that another transaction holds while it waits for one
 * the group holds (a lone upsert takes its keys in lock-id order in one statement too). Afterwards the group's own
 * `insertItemUnlessMatchLocked` statements take those locks again at once (advisory locks are re-entrant).
 * @returns how many distinct locks were taken.
 * @throws the driver's error (e.g. a lock timeout the operator configured).
 */
export async function lockMatchKeysOfMany(q: TransactionQuery, companyId: string, requests: MatchLockRequest[]): Promise<number> {
  const op: number[] = [];
  const pipeline: string[] = [];
  const match: string[] = [];
  const field: string[] = [];
  const kind: string[] = [];
  const value: string[] = [];
  requests.forEach((r, n) => {
    for (const k of r.keys) {
      op.push(n);
      pipeline.push(r.pipelineId);
      match.push(r.match);
      field.push(k.field);
      kind.push(typeof k.value === "string" ? "s" : "j");
      value.push(typeof k.value === "string" ? k.value : JSON.stringify(k.value));
    }
  });
  if (op.length === 0) return 0;
  const rows = await q<{ locks: number }>(
    `WITH parts AS (
       SELECT u.op, u.pipe, u.m, u.ord, u.f || chr(10) || u.k || chr(10) || CASE WHEN u.k = 's' THEN lower(btrim(u.v, $2)) ELSE u.v END AS part
       FROM unnest($3::int[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[]) WITH ORDINALITY AS u(op, pipe, m, f, k, v, ord)
     ), ids AS (
       SELECT hashtextextended('upsert' || chr(10) || $1 || chr(10) || pipe || chr(10) || part, 0) AS id
       FROM parts WHERE m = 'any'
       UNION
       SELECT hashtextextended('upsert' || chr(10) || $1 || chr(10) || min(pipe) || chr(10) || string_agg(part, chr(11) ORDER BY ord), 0)
       FROM parts WHERE m = 'all' GROUP BY op
     ), taken AS MATERIALIZED (
       SELECT id, pg_advisory_xact_lock(id) AS locked FROM ids ORDER BY id
     )
     SELECT count(*)::int AS locks FROM taken`,
    [companyId, TRIM_CHARACTERS, op, pipeline, match, field, kind, value],
  );
  return Number(rows[0]?.locks ?? 0);
}
