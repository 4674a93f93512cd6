/**
 * Data access for the console's "Connected apps" (issue 32): the `Grant` records of `oauth_records`
 * (docs/oauth-storage.md), with the name of their app (the `Client` record's `client_name`) and the user who granted
 * them. Raw SQL on both databases; every read is scoped to a company by the caller.
 */
import type { PrismaClient } from "../generated/prisma/client";
import type { Queryable } from "./companies";
import { revokeOAuthGrant } from "./oauth-records";
import { query, sqlOf } from "./sql";

/** One grant as the console lists it. */
export interface GrantRow {
  /** The grant id (the `Grant` record's id, oidc-provider's `jti`). */
  id: string;
  companyId: string;
  clientId: string | null;
  /** `client_name` of the app's `Client` record, when one is stored (console and DCR clients). */
  clientName: string | null;
  /** The user who granted it (`payload.accountId`), with their email and display name when the user still exists. */
  accountId: string | null;
  accountEmail: string | null;
  accountName: string | null;
  /** oidc-provider 9's Grant payload (`openid.scope`, `resources`, ...). */
  payload: Record<string, unknown>;
  createdAt: Date;
  lastUsedAt: Date | null;
}

interface Row {
  id: string;
  company_id: string;
  client_id: string | null;
  client_name: string | null;
  account_id: string | null;
  account_email: string | null;
  account_name: string | null;
  payload: Record<string, unknown>;
  created_at: Date;
  last_used_at: Date | null;
}

const SELECT = `SELECT g.id, g.company_id, g.client_id, c.payload->>'client_name' AS client_name,
       g.payload->>'accountId' AS account_id, u.email AS account_email, u.name AS account_name,
       g.payload, g.created_at, g.last_used_at
  FROM oauth_records g
  LEFT JOIN oauth_records c ON c.model = 'Client' AND c.id = g.client_id AND (c.expires_at IS NULL OR c.expires_at > $2)
  LEFT JOIN users u ON u.id = g.payload->>'accountId'
 WHERE g.model = 'Grant' AND g.company_id = $1 AND (g.expires_at IS NULL OR g.expires_at > $2)`;

function toGrant(r: Row): GrantRow {
  return {
    id: r.id,
    companyId: r.company_id,
    clientId: r.client_id,
    clientName: r.client_name,
    accountId: r.account_id,
    accountEmail: r.account_email,
    accountName: r.account_name,
    payload: r.payload,
    createdAt: r.created_at,
    lastUsedAt: r.last_used_at,
  };
}

/**
 * The unexpired grants of a company, newest first; only those granted by `accountId` when given (a member's own).
 * @param now records with `expires_at <= now` are absent (docs/oauth-storage.md).
 */
export async function listCompanyGrants(prisma: PrismaClient, companyId: string, now: Date, accountId?: string): Promise<GrantRow[]> {
  const rows = accountId
    ? await query<Row>(prisma, `${SELECT} AND g.payload->>'accountId' = $3 ORDER BY g.created_at DESC, g.id`, [companyId, now, accountId])
    : await query<Row>(prisma, `${SELECT} ORDER BY g.created_at DESC, g.id`, [companyId, now]);
  return rows.map(toGrant);
}

/** The unexpired grant `grantId` of a company, or null (unknown, expired, or another company's). */
export async function findCompanyGrant(prisma: PrismaClient, companyId: string, grantId: string, now: Date): Promise<GrantRow | null> {
  const rows = await query<Row>(prisma, `${SELECT} AND g.id = $3`, [companyId, now, grantId]);
  return rows[0] ? toGrant(rows[0]) : null;
}

/**
 * Revokes a grant (docs/oauth-storage.md "Revoking a grant"): db/oauth-records.ts `revokeOAuthGrant`, which locks the
 * `Grant` record first so that no token being issued under it at that moment survives it.
 * @returns how many records were deleted (0 when the grant was already gone).
 */
export async function deleteGrantRecords(prisma: PrismaClient, grantId: string): Promise<number> {
  return revokeOAuthGrant(sqlOf(prisma), grantId);
}

/**
 * Revokes every grant user `userId` of company `companyId` gave (docs/oauth-storage.md "Revoking a grant", for all of
 * them at once): deletes their `Grant` records, every record issued under them (access and refresh tokens, codes) and
 * the user's authorization-server `Session` records. Used when the user is removed or loses a role (a grant must never
 * give an app more than its user may do: services/users.ts), inside the caller's transaction.
 * @returns how many grants were revoked.
 */
export async function deleteUserGrantRecords(db: Queryable, companyId: string, userId: string): Promise<number> {
  // Lock the grants first (as GRANT_LOCK_BY_ID_SQL does for one): tokens being written under them finish or are kept
  // out, and the delete below, a later statement of the caller's transaction, sees every one.
  await db.$queryRaw`
    SELECT 1 FROM oauth_records WHERE company_id = ${companyId} AND model = 'Grant' AND payload->>'accountId' = ${userId} FOR UPDATE`;
  const rows = await db.$queryRaw<{ model: string }[]>`
    WITH g AS (
      SELECT id FROM oauth_records WHERE company_id = ${companyId} AND model = 'Grant' AND payload->>'accountId' = ${userId}
    )
    DELETE FROM oauth_records
    WHERE grant_id IN (SELECT id FROM g)
       OR (model = 'Grant' AND id IN (SELECT id FROM g))
       OR (model = 'Session' AND payload->>'accountId' = ${userId})
    RETURNING model`;
  return rows.filter((r) => r.model === "Grant").length;
}
