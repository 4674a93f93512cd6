/**
 * Data access for the console's "Developer apps" (issue 32): the `Client` records of `oauth_records` registered by
 * a company (`company_id` set, `payload.stageline_owner = true`; docs/oauth-storage.md). Raw SQL on both databases.
 */
import type { PrismaClient } from "../generated/prisma/client";
import { query, sqlOf } from "./sql";

/** A console-registered client as stored. `payload` is oidc-provider client metadata (never a clear secret). */
export interface ClientRow {
  clientId: string;
  companyId: string;
  payload: Record<string, unknown>;
  createdAt: Date;
}

interface Row {
  id: string;
  company_id: string;
  payload: Record<string, unknown>;
  created_at: Date;
}

const toClient = (r: Row): ClientRow => ({ clientId: r.id, companyId: r.company_id, payload: r.payload, createdAt: r.created_at });

/**
 * Stores a client registered in the console: `model = 'Client'`, `id = client_id = payload.client_id`, the owning
 * company, no expiry. `payload` must hold no `client_secret` (only `client_secret_sha256`).
 * @throws the driver's unique violation when the client id exists (ids are random: not expected).
 */
export async function insertClient(prisma: PrismaClient, companyId: string, clientId: string, payload: Record<string, unknown>): Promise<ClientRow> {
  const rows = await query<Row>(
    prisma,
    `INSERT INTO oauth_records (model, id, payload, company_id, client_id) VALUES ('Client', $1, $2::jsonb, $3, $1)
     RETURNING id, company_id, payload, created_at`,
    [clientId, JSON.stringify(payload), companyId],
  );
  return toClient(rows[0]!);
}

const OWNED = `model = 'Client' AND company_id = $1 AND payload->>'stageline_owner' = 'true'`;

/** The clients a company registered in the console, newest first. */
export async function listCompanyClients(prisma: PrismaClient, companyId: string): Promise<ClientRow[]> {
  const rows = await query<Row>(prisma, `SELECT id, company_id, payload, created_at FROM oauth_records WHERE ${OWNED} ORDER BY created_at DESC, id`, [companyId]);
  return rows.map(toClient);
}

/** The console-registered client `clientId` of a company, or null (unknown or another company's). */
export async function findCompanyClient(prisma: PrismaClient, companyId: string, clientId: string): Promise<ClientRow | null> {
  const rows = await query<Row>(prisma, `SELECT id, company_id, payload, created_at FROM oauth_records WHERE ${OWNED} AND id = $2`, [companyId, clientId]);
  return rows[0] ? toClient(rows[0]) : null;
}

/**
 * The statement of `deleteCompanyClient` ($1 = companyId, $2 = clientId). The client's records (`client_id = $2`)
 * and its grants are read through `oauth_records_client_id_idx` (migration 20261127700100_oauth_client_id_index),
 * the records of those grants through `oauth_records_grant_id_idx`: a bitmap OR of index scans, never a scan of the
 * whole table. (`grant_id = ANY (ARRAY(...))`, not `grant_id IN (subquery)`: with the latter PostgreSQL checks the
 * OR against every row of a sequential scan.)
 */
export const DELETE_COMPANY_CLIENT_SQL = `WITH owned AS (SELECT id FROM oauth_records WHERE ${OWNED} AND id = $2)
     DELETE FROM oauth_records
      WHERE EXISTS (SELECT 1 FROM owned)
        AND (client_id = $2
             OR (model = 'Client' AND id = $2)
             OR grant_id = ANY (ARRAY(SELECT id FROM oauth_records WHERE model = 'Grant' AND client_id = $2)))
     RETURNING model`;

/**
 * Deletes a company's console-registered client with everything issued to it, in one transaction: its grants
 * locked first, then one statement deleting the `Client` record, every record with its `client_id` (grants, tokens,
 * codes) and every record of those grants.
 * @returns how many records were deleted (0 when the client was not the company's or already gone).
 */
export async function deleteCompanyClient(prisma: PrismaClient, companyId: string, clientId: string): Promise<number> {
  return sqlOf(prisma).transaction(async (q) => {
    // The client's grants are locked first (db/oauth-records.ts GRANT_LOCK_BY_ID_SQL, for all of them): a token being
    // issued under one at this moment is either committed before the delete's snapshot or never written.
    await q(`SELECT 1 FROM oauth_records WHERE model = 'Grant' AND client_id = $2 AND EXISTS (SELECT 1 FROM oauth_records WHERE ${OWNED} AND id = $2) FOR UPDATE`, [companyId, clientId]);
    return (await q<{ model: string }>(DELETE_COMPANY_CLIENT_SQL, [companyId, clientId])).length;
  });
}
