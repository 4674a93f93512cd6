/**
 * Data access for idempotency keys (table `idempotency_keys`; CONTRACT "Idempotency",
 * draft-ietf-httpapi-idempotency-key-header): the first response to a create sent with an `Idempotency-Key`, stored
 * per company for 24 hours in the SAME statement or transaction as the create, so a created resource never lacks its
 * stored response and a crash leaves neither half.
 *
 * Exactness across processes on one PostgreSQL: a create with a key first takes the transaction-level advisory lock
 * of (company, key) with `pg_try_advisory_xact_lock` (not waiting: a key held by a running request is "in use"), then
 * looks for a stored response, then creates and stores. The lock is held until commit, and the primary key
 * (company_id, key) refuses a second stored response in any case (see `isStoredKeyConflict`).
 */
import type { Prisma, PrismaClient } from "../generated/prisma/client";
import { query, queryOne, type TransactionQuery } from "./sql";

/** The (company, key) of a create and the fingerprint of its request. */
export interface IdempotencyClaim {
  companyId: string;
  /** The `Idempotency-Key` header value (1..255 printable ASCII). */
  key: string;
  /** SHA-256 (hex) of the request's method, path and canonical JSON body. */
  requestHash: string;
  /** How long the stored response is kept, in seconds (CONTRACT: 24 hours). */
  ttlSeconds: number;
}

/** A stored first response. */
export interface StoredResponse {
  requestHash: string;
  status: number;
  /** The exact JSON text first sent. */
  body: string;
  location: string | null;
  /** Extra headers to replay with it (e.g. `Stageline-Upsert`), or null. */
  headers: Record<string, string> | null;
}

/** What a response to store is made of. */
export interface ResponseToStore {
  status: number;
  body: string;
  location: string | null;
  /** Extra headers to replay with it (e.g. `Stageline-Upsert`); none when absent. */
  headers?: Record<string, string>;
  /**
   * The item whose values `body` holds when `location` does not name it (an upsert that updated: 200 without
   * Location), so that deleting the item finds and erases this response (db/item-delete.ts).
   */
  itemId?: string;
}

/**
 * The SQL expression of the advisory-lock id of (company `$company`, key `$key`): a 64-bit hash of both. A collision
 * of two keys can only make one of them wait (answer "in use") while the other runs.
 */
export function advisoryLockId(company: string, key: string): string {
  return `hashtextextended(${company} || chr(10) || ${key}, 0)`;
}

/** The columns of a stored response as the statements below select them. */
export const STORED_COLUMNS = "request_hash, status, response_body, location, response_headers";

/** A stored row as selected with {@link STORED_COLUMNS}. */
export interface StoredRow {
  request_hash: string;
  status: number;
  response_body: string;
  location: string | null;
  response_headers: Record<string, string> | null;
}

/** Converts a selected row. */
export function toStoredResponse(row: StoredRow): StoredResponse {
  return {
    requestHash: row.request_hash,
    status: Number(row.status),
    body: row.response_body,
    location: row.location,
    headers: row.response_headers ?? null,
  };
}

/**
 * For creates that are ONE statement (db/items.ts, db/tasks.ts): the CTEs `claim` (the key's advisory lock, taken
 * without waiting) and `prior` (its unexpired stored response), for the SQL parameters `company` and `key` (e.g.
 * `$2`, `$15`). The create's own CTEs write only under `CLAIM_TAKEN`.
 */
export function claimCtes(company: string, key: string): string {
  return `claim AS MATERIALIZED (
           SELECT pg_try_advisory_xact_lock(${advisoryLockId(company, key)}) AS got
         ), prior AS MATERIALIZED (
           SELECT ${STORED_COLUMNS} FROM idempotency_keys WHERE company_id = ${company} AND key = ${key} AND expires_at > now()
         )`;
}

/** SQL condition: the key's lock was taken and no response is stored (`claimCtes`). */
export const CLAIM_TAKEN = "(SELECT got FROM claim) AND NOT EXISTS (SELECT 1 FROM prior)";

/**
 * The CTE `stored` that stores a 201 response for the key when the one-row CTE `createdCte` holds the new resource.
 * Parameters are SQL expressions: company, key, request hash, response body text, location and TTL in seconds.
 */
export function storeCreatedCte(createdCte: string, p: { company: string; key: string; hash: string; body: string; location: string; ttl: string }): string {
  return `stored AS (
           INSERT INTO idempotency_keys (company_id, key, request_hash, status, response_body, location, created_at, expires_at)
           SELECT ${p.company}, ${p.key}, ${p.hash}, 201, ${p.body}, ${p.location}, now(), now() + make_interval(secs => ${p.ttl}::int)
           FROM ${createdCte}
         )`;
}

/** The select list and FROM clause of a statement with `claimCtes`: one row with `got` and the stored columns. */
export const CLAIM_SELECT = {
  columns: "(SELECT got FROM claim) AS got, prior.request_hash, prior.status, prior.response_body, prior.location, prior.response_headers",
  from: "FROM (SELECT 1) AS one LEFT JOIN prior ON true",
};

/** A row selected with `CLAIM_SELECT.columns`. */
export type ClaimRow = { got: boolean } & Partial<StoredRow>;

/** What a one-statement create learned about its key: held by another request, a stored response, or `null`: taken. */
export function claimResult(row: ClaimRow): { inUse: true } | { stored: StoredResponse } | null {
  if (!row.got) return { inUse: true };
  if (row.request_hash != null) return { stored: toStoredResponse(row as StoredRow) };
  return null;
}

/**
 * Runs a one-statement create with a claim (`run`), again (up to 3 times in all) when it fails because a response
 * to the key was stored after the statement's snapshot or an expired row of the key is still there
 * (`isStoredKeyConflict`; the expired row is deleted first).
 * @throws whatever `run` throws otherwise, or on the last attempt.
 */
export async function retryOnStoredKeyConflict<T>(prisma: PrismaClient, claim: IdempotencyClaim, run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      if (attempt >= 3 || !isStoredKeyConflict(err)) throw err;
      await deleteExpiredKey(prisma, claim);
    }
  }
}

/** The outcome of taking a key at the start of a create's transaction. */
export type ClaimOutcome = { kind: "claimed" } | { kind: "in_use" } | { kind: "stored"; stored: StoredResponse };

/**
 * In the create's interactive transaction `tx`, before anything is written: takes the advisory lock of the claim's
 * (company, key) without waiting and reads its unexpired stored response, in one statement.
 * @returns `in_use` when another transaction holds the key, `stored` when a response is stored, else `claimed` (the
 * lock is then held until `tx` ends; store the response with `storeResponse` in the same transaction).
 * `tx` is an interactive Prisma transaction or an open `SqlRunner.transaction`'s `TransactionQuery`.
 */
export async function claimKey(tx: Prisma.TransactionClient | TransactionQuery, claim: IdempotencyClaim): Promise<ClaimOutcome> {
  const rows = await inTransaction<Partial<StoredRow> & { got: boolean }>(
    tx,
    `SELECT l.got, s.request_hash, s.status, s.response_body, s.location, s.response_headers
     FROM (SELECT pg_try_advisory_xact_lock(${advisoryLockId("$1", "$2")}) AS got) l
     LEFT JOIN idempotency_keys s ON l.got AND s.company_id = $1 AND s.key = $2 AND s.expires_at > now()`,
    [claim.companyId, claim.key],
  );
  const row = rows[0];
  if (!row?.got) return { kind: "in_use" };
  if (row.request_hash == null) return { kind: "claimed" };
  return { kind: "stored", stored: toStoredResponse(row as StoredRow) };
}

/**
 * Stores the response of a claimed key in the create's transaction `tx` (after `claimKey` returned `claimed`, so the
 * advisory lock is held and no unexpired response exists), replacing an expired row of the same key.
 * @throws Error when an unexpired response is stored already (cannot happen while the lock is held); the
 * transaction then rolls back with the resource.
 */
export async function storeResponse(
  tx: Prisma.TransactionClient | TransactionQuery,
  claim: IdempotencyClaim,
  response: ResponseToStore,
): Promise<void> {
  const stored = await inTransaction<unknown>(tx, STORE_UNLESS_UNEXPIRED, storeParams(claim, response));
  if (stored.length !== 1) throw new Error("storeResponse: a response is already stored for this idempotency key");
}

/**
 * Inserts a stored response, or replaces the key's row when it has expired; returns one row when it stored.
 * Parameters: `storeParams`.
 */
const STORE_UNLESS_UNEXPIRED = `INSERT INTO idempotency_keys AS k (company_id, key, request_hash, status, response_body, location,
    response_headers, item_id, created_at, expires_at)
  VALUES ($1, $2, $3, $4, $5, $6, $8::jsonb, $9, now(), now() + make_interval(secs => $7::int))
  ON CONFLICT (company_id, key) DO UPDATE SET request_hash = EXCLUDED.request_hash, status = EXCLUDED.status,
    response_body = EXCLUDED.response_body, location = EXCLUDED.location, response_headers = EXCLUDED.response_headers,
    item_id = EXCLUDED.item_id,
    created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
  WHERE k.expires_at <= now()
  RETURNING true AS stored`;

function storeParams(claim: IdempotencyClaim, response: ResponseToStore): unknown[] {
  const headers = response.headers && Object.keys(response.headers).length > 0 ? JSON.stringify(response.headers) : null;
  return [claim.companyId, claim.key, claim.requestHash, response.status, response.body, response.location, claim.ttlSeconds, headers, response.itemId ?? null];
}

/** One statement in an interactive Prisma transaction or an open `SqlRunner.transaction`. */
function inTransaction<T>(tx: Prisma.TransactionClient | TransactionQuery, text: string, params: unknown[]): Promise<T[]> {
  return typeof tx === "function" ? tx<T>(text, params) : tx.$queryRawUnsafe<T[]>(text, ...params);
}

/**
 * Stores the response of a request that failed (a 4xx, CONTRACT: replayed too) unless a response to the key is
 * stored already, in one statement outside any create.
 * @returns null when this response was stored, or when the company is gone (deleted after the request was
 * authenticated: no key of it can be stored or replayed any more); else the response stored before (replay it).
 */
export async function storeFailureOrRead(prisma: PrismaClient, claim: IdempotencyClaim, response: ResponseToStore): Promise<StoredResponse | null> {
  for (let attempt = 0; attempt < 3; attempt++) {
    let inserted: unknown[];
    try {
      inserted = await query<{ stored: boolean }>(prisma, STORE_UNLESS_UNEXPIRED, storeParams(claim, response));
    } catch (err) {
      if (isMissingCompany(err)) return null;
      throw err;
    }
    if (inserted.length > 0) return null;
    const row = await queryOne<StoredRow>(
      prisma,
      `SELECT ${STORED_COLUMNS} FROM idempotency_keys WHERE company_id = $1 AND key = $2 AND expires_at > now()`,
      [claim.companyId, claim.key],
    );
    if (row) return toStoredResponse(row);
    // It expired between the two statements: try again.
  }
  throw new Error("storeFailureOrRead: the stored response kept expiring");
}

/** Deletes the claim's key when it has expired (before storing a new response under it). */
export async function deleteExpiredKey(prisma: PrismaClient, claim: Pick<IdempotencyClaim, "companyId" | "key">): Promise<void> {
  await query(prisma, "DELETE FROM idempotency_keys WHERE company_id = $1 AND key = $2 AND expires_at <= now()", [claim.companyId, claim.key]);
}

/**
 * Deletes expired keys (CONTRACT "Idempotency": kept 24 hours), at most `batch` per call.
 * @returns how many rows were deleted.
 */
export async function purgeExpiredKeys(prisma: PrismaClient, batch = 10_000): Promise<number> {
  const rows = await query<{ n: number }>(
    prisma,
    `WITH gone AS (
       DELETE FROM idempotency_keys WHERE ctid IN (SELECT ctid FROM idempotency_keys WHERE expires_at <= now() LIMIT $1::int)
       RETURNING 1
     ) SELECT count(*)::int AS n FROM gone`,
    [batch],
  );
  return Number(rows[0]?.n ?? 0);
}

/**
 * Is `err` the unique violation (SQLSTATE 23505) of `idempotency_keys_pkey`, as the raw runner (db/sql.ts) passes it
 * on from either driver: a response stored by a concurrent request after the statement's snapshot, or an expired row
 * of the key not purged yet?
 */
export function isStoredKeyConflict(err: unknown): boolean {
  const e = err as { code?: unknown; constraint?: unknown; message?: unknown } | null;
  const duplicate = e?.code === "23505" || /duplicate key/i.test(String(e?.message ?? ""));
  return duplicate && (e?.constraint === "idempotency_keys_pkey" || /idempotency_keys_pkey/.test(String(e?.message ?? "")));
}

/** Is `err` the foreign-key violation (SQLSTATE 23503) of `idempotency_keys_company_id_fkey`: the company is gone? */
function isMissingCompany(err: unknown): boolean {
  const e = err as { code?: unknown; constraint?: unknown; message?: unknown } | null;
  const text = String(e?.message ?? "");
  const violation = e?.code === "23503" || /foreign key/i.test(text);
  return violation && (e?.constraint === "idempotency_keys_company_id_fkey" || /idempotency_keys_company_id_fkey/.test(text));
}

/** A key held for the whole of a request that spans several transactions (`holdKeyForRequest`). */
export interface HeldKey {
  /** Gives the key up (and the connection that held it back to the pool). Never throws. */
  release(): Promise<void>;
}

/**
 * Takes the claim's key for a request made of several transactions (a non-atomic batch, CONTRACT "Batch writes":
 * the key is claimed before any operation runs), without waiting. On PostgreSQL: the SESSION-level advisory lock of
 * (company, key), held until `release` on a connection of its own, opened for it OUTSIDE the pool (with the pool's
 * settings: same database and schema), so that requests holding keys can never take every pooled connection and
 * starve their own operations. The session lock conflicts with the transaction-level lock the single creates take
 * (`claimKey`, `claimCtes`) in every process, so a concurrent duplicate, batch or single, is "in use". On PGlite there
 * is one process per data directory and one session, and the caller's in-process set of held keys
 * (http/idempotency.ts) is what excludes a concurrent duplicate: nothing is taken here.
 * @returns the held key, or null when another request holds it.
 * @throws the driver's error (nothing is held then).
 */
export async function holdKeyForRequest(db: { pgPool?: import("pg").Pool }, claim: Pick<IdempotencyClaim, "companyId" | "key">): Promise<HeldKey | null> {
  if (!db.pgPool) return { release: async () => undefined };
  const pg = await import("pg");
  const client = new pg.Client(db.pgPool.options);
  client.on("error", () => undefined); // a dropped connection ends its session lock; `release` then has nothing to do
  const lock = advisoryLockId("$1::text", "$2::text");
  try {
    await client.connect();
    const { rows } = await client.query<{ got: boolean }>(`SELECT pg_try_advisory_lock(${lock}) AS got`, [claim.companyId, claim.key]);
    if (!rows[0]?.got) {
      await client.end();
      return null;
    }
  } catch (err) {
    await client.end().catch(() => undefined);
    throw err;
  }
  // Ending the session releases its advisory locks.
  return { release: () => client.end().catch(() => undefined) };
}

/** The claim's unexpired stored response, or null. */
export function findStoredResponse(prisma: PrismaClient, claim: Pick<IdempotencyClaim, "companyId" | "key">): Promise<StoredResponse | null> {
  return queryOne<StoredRow>(
    prisma,
    `SELECT ${STORED_COLUMNS} FROM idempotency_keys WHERE company_id = $1 AND key = $2 AND expires_at > now()`,
    [claim.companyId, claim.key],
  ).then((row) => (row ? toStoredResponse(row) : null));
}
