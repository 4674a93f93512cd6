/**
 * The records of one OAuth client are read by `client_id` through an index (review of issue 32; migration
 * 20261127700100_oauth_client_id_index). Dynamic Client Registration is open to anyone, so the number of `Client`
 * records is attacker-controlled: the purge of unused DCR clients (db/oauth-records.ts) and deleting a console client
 * (db/oauth-clients.ts) must not read the whole table once per client. Checked as notes.test.ts checks its index: the
 * index as the catalog has it, the planner's choice (EXPLAIN, after ANALYZE) on a table crowded with 20,000 DCR
 * clients, and the statements' results on that table. On PGlite and PostgreSQL alike.
 */
import { deleteCompanyClient, DELETE_COMPANY_CLIENT_SQL } from "../src/db/oauth-clients";
import { purgeUnusedRegisteredClients, PURGE_UNUSED_CLIENTS_SQL } from "../src/db/oauth-records";
import { UNUSED_CLIENT_MAX_AGE_SECONDS } from "../src/oauth/purge";
import { startTestServer, type TestServer } from "./helpers/test-server";

const INDEX = "oauth_records_client_id_idx";
/** Unused DCR clients in the crowd (each with its RegistrationAccessToken). */
const CROWD = 20_000;
/** Old DCR clients with a grant (kept by the purge). */
const GRANTED = 20;

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  // The crowd: old DCR clients never used, each with the registration access token oidc-provider issues; a few old
  // clients with a grant (and its token); a console client of the company with grants, tokens and codes.
  await sql().query(
    `insert into oauth_records (model, id, payload, client_id, created_at)
     select 'Client', 'dcr-' || g, jsonb_build_object('client_id', 'dcr-' || g), 'dcr-' || g, now() - interval '30 days' + g * interval '1 second'
       from generate_series(1, $1::int) g
     union all
     select 'RegistrationAccessToken', 'rat-' || g, '{}'::jsonb, 'dcr-' || g, now() - interval '30 days'
       from generate_series(1, $1::int) g`,
    [CROWD],
  );
  await sql().query(
    `insert into oauth_records (model, id, payload, grant_id, client_id, company_id, created_at)
     select 'Client', 'used-' || g, jsonb_build_object('client_id', 'used-' || g), null, 'used-' || g, null, now() - interval '40 days'
       from generate_series(1, $1::int) g
     union all
     select 'Grant', 'used-grant-' || g, '{}'::jsonb, 'used-grant-' || g, 'used-' || g, $2, now() - interval '40 days'
       from generate_series(1, $1::int) g
     union all
     select 'AccessToken', 'used-at-' || g, '{}'::jsonb, 'used-grant-' || g, 'used-' || g, $2, now() - interval '40 days'
       from generate_series(1, $1::int) g`,
    [GRANTED, t.companyId],
  );
  await sql().query(
    `insert into oauth_records (model, id, payload, company_id, client_id)
     values ('Client', 'sl_app_console', '{"client_id": "sl_app_console", "stageline_owner": true}'::jsonb, $1, 'sl_app_console')`,
    [t.companyId],
  );
  // Its 3 grants, each with an access token, a refresh token and a code; and an interaction that names no client but
  // carries a grant id (a consent for an existing grant: deleted with the grant, as every record of it).
  await sql().query(
    `insert into oauth_records (model, id, payload, grant_id, company_id, client_id)
     select m, m || '-' || g, '{}'::jsonb, 'console-grant-' || g, $1, 'sl_app_console'
       from generate_series(1, 3) g, unnest(array['AccessToken', 'RefreshToken', 'AuthorizationCode']) m
     union all
     select 'Grant', 'console-grant-' || g, '{}'::jsonb, 'console-grant-' || g, $1, 'sl_app_console' from generate_series(1, 3) g
     union all
     select 'Interaction', 'console-interaction-1', '{}'::jsonb, 'console-grant-1', null, null`,
    [t.companyId],
  );
  await sql().query("ANALYZE oauth_records");
}, 120_000);
afterAll(() => t?.close());

const sql = () => t.server.ctx.db.sql;
const count = async (where: string, params: unknown[] = []) =>
  (await sql().query<{ n: number }>(`select count(*)::int as n from oauth_records where ${where}`, params))[0]!.n;

type PlanNode = { "Node Type"?: string; Alias?: string; Plans?: PlanNode[]; Plan?: PlanNode; "QUERY PLAN"?: PlanNode[] };

/** Every plan node in `tree` (EXPLAIN's JSON, or a part of it), depth first. */
function nodes(tree: unknown): PlanNode[] {
  if (Array.isArray(tree)) return tree.flatMap(nodes);
  if (!tree || typeof tree !== "object") return [];
  const n = tree as PlanNode;
  const below = [...nodes(n.Plans), ...nodes(n.Plan), ...nodes(n["QUERY PLAN"])];
  return n["Node Type"] ? [n, ...below] : below;
}

/** The planner's plan of `statement` (EXPLAIN without ANALYZE: nothing runs), as JSON text. */
async function planOf(statement: string, params: unknown[]): Promise<string> {
  return JSON.stringify(await sql().query(`EXPLAIN (FORMAT JSON) ${statement}`, params));
}

describe("oauth_records by client_id", () => {
  it("has a partial index on client_id", async () => {
    const rows = await sql().query<{ indexdef: string }>(`select indexdef from pg_indexes where schemaname = current_schema() and tablename = 'oauth_records' and indexname = $1`, [INDEX]);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.indexdef).toMatch(/ON \S*oauth_records USING btree \(client_id\) WHERE \(client_id IS NOT NULL\)$/);
  });

  it("the purge of unused DCR clients can find registration access tokens through it, and deletes the right clients", async () => {
    // The clients' registration access tokens by client_id: index probes per purged client. (With a batch of 500 on
    // this table of 40,000 records the planner prefers one sequential pass per batch, hashed, which is not a scan per
    // client either; whether a Grant names a client is one hashed anti-join over the Grant records, read by the
    // primary key's `model` prefix.)
    const plan = await planOf(PURGE_UNUSED_CLIENTS_SQL, [UNUSED_CLIENT_MAX_AGE_SECONDS, 50]);
    expect(plan).toContain(INDEX);
    // The Grant side (`g`) is never read by a sequential scan repeated under a nested loop.
    const loops = nodes(JSON.parse(plan)).filter((n) => n["Node Type"] === "Nested Loop");
    expect(loops.flatMap((n) => nodes(n.Plans)).filter((n) => n["Node Type"] === "Seq Scan" && n.Alias === "g")).toEqual([]);
    expect(await purgeUnusedRegisteredClients(sql(), UNUSED_CLIENT_MAX_AGE_SECONDS, 500)).toBe(500);
    // Oldest first: dcr-1 .. dcr-500 and their tokens; the used clients (older still) stay with their grants.
    expect(await count(`model = 'Client' and id like 'dcr-%'`)).toBe(CROWD - 500);
    expect(await count(`model = 'Client' and id in ('dcr-1', 'dcr-500')`)).toBe(0);
    expect(await count(`model = 'Client' and id = 'dcr-501'`)).toBe(1);
    expect(await count(`model = 'RegistrationAccessToken'`)).toBe(CROWD - 500);
    expect(await count(`model = 'RegistrationAccessToken' and client_id in ('dcr-1', 'dcr-500')`)).toBe(0);
    expect(await count(`client_id like 'used-%'`)).toBe(3 * GRANTED);
  });

  it("the purge picks each batch oldest first through the DCR clients' age index, never reading every Client record", async () => {
    const rows = await sql().query<{ indexdef: string }>(
      `select indexdef from pg_indexes where schemaname = current_schema() and tablename = 'oauth_records' and indexname = 'oauth_records_dcr_client_age_idx'`,
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.indexdef).toMatch(/USING btree \(created_at\) WHERE \(\(model = 'Client'::text\) AND \(company_id IS NULL\)\)$/);
    const plan = await planOf(PURGE_UNUSED_CLIENTS_SQL, [UNUSED_CLIENT_MAX_AGE_SECONDS, 500]);
    expect(plan).toContain("oauth_records_dcr_client_age_idx");
    // The batch's clients (`c`) come from the index, in its order: no sequential pass over the table and no sort.
    const clientSide = nodes(JSON.parse(plan)).filter((n) => n.Alias === "c");
    expect(clientSide.map((n) => n["Node Type"])).toEqual(["Index Scan"]);
    expect(nodes(JSON.parse(plan)).filter((n) => n["Node Type"] === "Sort")).toEqual([]);
  });

  it("deleting a console client reads its records and its grants' records through it, and deletes exactly those", async () => {
    const total = await count("true");
    const plan = await planOf(DELETE_COMPANY_CLIENT_SQL, [t.companyId, "sl_app_console"]);
    expect(plan).toContain(INDEX);
    // Index scans only (client_id, the primary key, grant_id: a bitmap OR), whatever the table holds.
    expect(nodes(JSON.parse(plan)).filter((n) => n["Node Type"] === "Seq Scan")).toEqual([]);
    // The Client, 3 grants, their 9 tokens and codes, and the interaction carrying a grant id.
    expect(await deleteCompanyClient(t.server.ctx.prisma, t.companyId, "sl_app_console")).toBe(1 + 3 + 9 + 1);
    expect(await count(`client_id = 'sl_app_console' or grant_id like 'console-grant-%'`)).toBe(0);
    expect(await count("true")).toBe(total - 14);
    // A DCR client is not the company's to delete from the console.
    expect(await deleteCompanyClient(t.server.ctx.prisma, t.companyId, "dcr-501")).toBe(0);
    expect(await count(`model = 'Client' and id = 'dcr-501'`)).toBe(1);
  });
});
