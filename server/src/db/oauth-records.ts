/**
 * Data access for the authorization server's state, table `oauth_records` (docs/oauth-storage.md is the format;
 * migration 20261127700000_oauth). Raw parameterized SQL through db/sql.ts, identical on PGlite and PostgreSQL, so
 * every server process on one database shares grants, codes and tokens. Ids arrive here already in their stored form
 * (the caller hashes bearer secrets); this module never sees a raw token.
 */
import type { SqlRunner } from "./sql";

/** One stored record as the adapter reads it back. */
export interface OAuthRecordRow {
  payload: Record<string, unknown>;
  consumed: boolean;
  /** When it was consumed, in epoch seconds; null when not consumed. */
  consumedAt: number | null;
}

/** What `upsertOAuthRecord` writes. */
export interface OAuthRecordWrite {
  model: string;
  /** The stored id (for bearer secrets already `base64url(sha256(id))`). */
  id: string;
  payload: Record<string, unknown>;
  grantId: string | null;
  uid: string | null;
  userCode: string | null;
  /** A user id: the record's company is that user's company (none when absent or unknown). */
  accountId: string | null;
  clientId: string | null;
  /** Lifetime in seconds from now; null = no expiry. */
  expiresInSeconds: number | null;
}

/**
 * Inserts or replaces a record. `company_id` is the company of `accountId`'s user; when that is unknown an existing
 * row's company is kept (a console-registered client keeps its owner). `consumed_at` is kept on replace.
 *
 * With `requiresGrant` (codes and tokens issued under a grant) the record is written only while its `Grant` record
 * exists, and the statement holds that `Grant` row `FOR KEY SHARE` until it commits. A revocation deletes the `Grant`
 * row first and then, in a later statement of the same transaction, everything carrying its `grant_id`
 * (`revokeOAuthGrant`), so a token written while a grant is being revoked is either seen and deleted by the
 * revocation, or not written at all: no record outlives its grant (issue 39, CONTRACT "One use means one use").
 * @returns false when `requiresGrant` and the grant is gone (nothing was written); true otherwise.
 */
export async function upsertOAuthRecord(sql: SqlRunner, r: OAuthRecordWrite, requiresGrant = false): Promise<boolean> {
  const params = [r.model, r.id, JSON.stringify(r.payload), r.grantId, r.uid, r.userCode, r.accountId, r.clientId, r.expiresInSeconds];
  const guarded = requiresGrant && r.grantId !== null;
  const rows = await sql.query(
    `${guarded ? "with g as (select 1 from oauth_records where model = 'Grant' and id = $4 for key share) " : ""}
     insert into oauth_records (model, id, payload, grant_id, uid, user_code, company_id, client_id, expires_at)
     select $1, $2, $3::jsonb, $4, $5, $6, (select company_id from users where id = $7), $8,
            case when $9::int is null then null else now() + make_interval(secs => $9::int) end
     ${guarded ? "from g" : ""}
     on conflict (model, id) do update set payload = excluded.payload, grant_id = excluded.grant_id, uid = excluded.uid,
       user_code = excluded.user_code, company_id = coalesce(excluded.company_id, oauth_records.company_id),
       client_id = excluded.client_id, expires_at = excluded.expires_at
     returning 1`,
    params,
  );
  return rows.length > 0;
}

const LIVE = "(expires_at is null or expires_at > now())";

function toRow(rows: { payload: Record<string, unknown>; consumed_at: Date | null }[]): OAuthRecordRow | undefined {
  const row = rows[0];
  if (!row) return undefined;
  const consumedAt = row.consumed_at === null ? null : Math.floor(new Date(row.consumed_at).getTime() / 1000);
  return { payload: row.payload, consumed: consumedAt !== null, consumedAt };
}

/** The live (unexpired) record `model`/`id`, or undefined. */
export async function findOAuthRecord(sql: SqlRunner, model: string, id: string): Promise<OAuthRecordRow | undefined> {
  return toRow(await sql.query(`select payload, consumed_at from oauth_records where model = $1 and id = $2 and ${LIVE}`, [model, id]));
}

/** The live record of `model` whose `uid` column is `uid` (sessions, interactions), or undefined. */
export async function findOAuthRecordByUid(sql: SqlRunner, model: string, uid: string): Promise<OAuthRecordRow | undefined> {
  return toRow(await sql.query(`select payload, consumed_at from oauth_records where model = $1 and uid = $2 and ${LIVE} limit 1`, [model, uid]));
}

/** The live record of `model` whose `user_code` is `userCode` (device flow; unused while it is off), or undefined. */
export async function findOAuthRecordByUserCode(sql: SqlRunner, model: string, userCode: string): Promise<OAuthRecordRow | undefined> {
  return toRow(await sql.query(`select payload, consumed_at from oauth_records where model = $1 and user_code = $2 and ${LIVE} limit 1`, [model, userCode]));
}

/** What `consumeOAuthRecord` found: whether this call was the one use, and the record's grant. */
export interface ConsumeOutcome {
  /** True for the first use; false when the record was already used (or is gone: revoked, purged). */
  first: boolean;
  /** The record's `grant_id` (null when it has none or the record is gone). */
  grantId: string | null;
}

/**
 * Marks a record used (codes, refresh tokens) if and only if nobody did before: one compare-and-set statement
 * (`consumed_at is null` re-checked under the row lock), so of N concurrent uses, on one connection or many, in one
 * process or several, exactly one gets `first: true` (OAuth 2.1 section 4.1.3: a code is used once; section 4.3.1:
 * refresh token rotation). Later calls leave the first time.
 */
export async function consumeOAuthRecord(sql: SqlRunner, model: string, id: string): Promise<ConsumeOutcome> {
  const rows = await sql.query<{ first: boolean; grant_id: string | null }>(
    `with used as (
       update oauth_records set consumed_at = now() where model = $1 and id = $2 and consumed_at is null returning grant_id)
     select exists (select 1 from used) as first,
            coalesce((select grant_id from used), (select grant_id from oauth_records where model = $1 and id = $2)) as grant_id`,
    [model, id],
  );
  return { first: rows[0]?.first === true, grantId: rows[0]?.grant_id ?? null };
}

/** Deletes one record. */
export async function destroyOAuthRecord(sql: SqlRunner, model: string, id: string): Promise<void> {
  await sql.query(`delete from oauth_records where model = $1 and id = $2`, [model, id]);
}

/**
 * Locks `Grant` records before they are deleted (`FOR UPDATE`, so the caller must be inside a transaction): the
 * lock waits for every code or token being written under those grants (`upsertOAuthRecord` with `requiresGrant`
 * holds the `Grant` row `FOR KEY SHARE`) and keeps new ones out, so the caller's next statement, with a snapshot
 * taken after the lock, sees and deletes all of them. Every revocation path uses it (this module, db/oauth-grants.ts,
 * db/oauth-clients.ts): no record outlives its grant (issue 39).
 * `$1` is compared with the record's id: `GRANT_LOCK_BY_ID_SQL`.
 */
export const GRANT_LOCK_BY_ID_SQL = `select 1 from oauth_records where model = 'Grant' and id = $1 for update`;

/**
 * Revokes a grant (docs/oauth-storage.md "Revoking a grant"): in one transaction, locks the `Grant` record
 * (`GRANT_LOCK_BY_ID_SQL`), then deletes it and every record carrying its `grant_id`. Afterwards no record of the
 * grant exists and none can be written under it.
 * @returns how many records were deleted (0 when the grant was already gone).
 */
export async function revokeOAuthGrant(sql: SqlRunner, grantId: string): Promise<number> {
  return sql.transaction(async (q) => {
    await q(GRANT_LOCK_BY_ID_SQL, [grantId]);
    const rows = await q(`delete from oauth_records where grant_id = $1 or (model = 'Grant' and id = $1) returning 1`, [grantId]);
    return rows.length;
  });
}

/**
 * Deletes up to `batch` records whose `expires_at` has passed (they are already invisible to every reader).
 * @returns how many were deleted.
 */
export async function purgeExpiredOAuthRecords(sql: SqlRunner, batch: number): Promise<number> {
  const rows = await sql.query<{ n: number }>(
    `with gone as (
       delete from oauth_records where (model, id) in (
         select model, id from oauth_records where expires_at <= now() order by expires_at limit $1)
       returning 1)
     select count(*)::int as n from gone`,
    [batch],
  );
  return rows[0]?.n ?? 0;
}

/**
 * The statement of `purgeUnusedRegisteredClients` ($1 = olderThanSeconds, $2 = batch). Never a scan of the table per
 * client: the purged clients' `RegistrationAccessToken` records are found by `client_id` (index
 * `oauth_records_client_id_idx`, migration 20261127700100_oauth_client_id_index, or one hashed pass when the planner
 * finds that cheaper), and whether a `Grant` names a client is one hashed anti-join over the `Grant` records (the
 * primary key's `model` prefix) or `client_id` index probes. A batch picks its clients oldest first through the
 * partial index `oauth_records_dcr_client_age_idx` (migration 20261127700200_oauth_dcr_client_age_index: DCR clients,
 * by `created_at`), stopping after `$2` of them: it never reads the other `Client` records, however many an attacker
 * registered.
 */
export const PURGE_UNUSED_CLIENTS_SQL = `with gone as (
       delete from oauth_records where model = 'Client' and id in (
         select c.id from oauth_records c
          where c.model = 'Client' and c.company_id is null
            and (c.payload->>'stageline_metadata_document') is distinct from 'true'
            and c.created_at < now() - make_interval(secs => $1::int)
            and not exists (select 1 from oauth_records g where g.model = 'Grant' and g.client_id = c.id)
          order by c.created_at limit $2)
       returning id),
     tokens as (
       -- Runs to completion although the main query does not read it (PostgreSQL: data-modifying WITH).
       delete from oauth_records where model = 'RegistrationAccessToken' and client_id in (select id from gone))
     select count(*)::int as n from gone`;

/**
 * Deletes up to `batch` clients from Dynamic Client Registration (RFC 7591) that were never used: `Client` records
 * with no `company_id` (not registered in the console), not a CIMD naming record (`payload.stageline_metadata_document`),
 * created more than `olderThanSeconds` ago, with no `Grant` record naming them (`client_id`); with each, its
 * `RegistrationAccessToken` records (oidc-provider issues one per registration, without expiry). One statement, oldest
 * first. The keys are the columns, not `payload.stageline_owner`: a DCR registrant may send that property itself, and
 * a console client always has its company. A grant written by a consent that commits while this statement runs is
 * not seen (the statement's snapshot): that user's app gets `invalid_client` and registers again.
 * @returns how many clients were deleted.
 */
export async function purgeUnusedRegisteredClients(sql: SqlRunner, olderThanSeconds: number, batch: number): Promise<number> {
  const rows = await sql.query<{ n: number }>(PURGE_UNUSED_CLIENTS_SQL, [olderThanSeconds, batch]);
  return rows[0]?.n ?? 0;
}
