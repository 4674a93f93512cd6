/**
 * Issue 19 item 5: a company always keeps at least one owner, also when two owners demote or remove each other at
 * the same moment. Before the fix `changeRole` / `removeUser` counted the owners, then wrote, outside a transaction:
 * on PostgreSQL both requests counted two owners and both wrote, leaving the company with none. Now each runs in one
 * transaction that first locks the company's row (db/users.ts `lockCompanyForOwnerChange`), so the second waits,
 * sees one owner left and is refused.
 *
 * On PGlite (one connection) the same calls run one after another, so there is no race there, but the same
 * assertions hold; the PostgreSQL pass (TEST_DATABASE_URL) is where this test bites.
 */
import { CLI_ACTOR } from "../src/services/audit-log";
import { insertCompany } from "../src/db/companies";
import { DomainError } from "../src/services/errors";
import { changeRole, createUser, removeUser } from "../src/services/users";
import { startTestServer, type TestServer } from "./helpers/test-server";

const ROUNDS = 8;

let t: TestServer;
let seq = 0;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t?.close();
});

/** A new company with two owners. */
async function companyWithTwoOwners(): Promise<{ companyId: string; owners: [string, string] }> {
  const prisma = t.server.ctx.prisma;
  const company = await insertCompany(prisma, { name: `Race ${++seq}` });
  const make = async (n: number) =>
    (await createUser(prisma, { company_id: company.id, email: `owner${n}-${seq}@race.example`, role: "owner" }, { actor: CLI_ACTOR })).id;
  return { companyId: company.id, owners: [await make(1), await make(2)] };
}

/** Both outcomes settled: exactly one succeeded and the other was refused as the last owner. */
function expectOneRefused(results: PromiseSettledResult<unknown>[]): void {
  const refused = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
  expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
  expect(refused).toHaveLength(1);
  expect(refused[0]!.reason).toBeInstanceOf(DomainError);
  expect((refused[0]!.reason as DomainError).message).toMatch(/last owner/);
}

async function ownerCount(companyId: string): Promise<number> {
  return t.server.ctx.prisma.user.count({ where: { companyId, role: "owner" } });
}

it("two owners demoting each other at once leave exactly one owner", async () => {
  for (let round = 0; round < ROUNDS; round++) {
    const { companyId, owners } = await companyWithTwoOwners();
    const by = { actor: CLI_ACTOR, companyId };
    const results = await Promise.allSettled(owners.map((id) => changeRole(t.server.ctx.prisma, id, { role: "admin" }, by)));
    expect(await ownerCount(companyId)).toBe(1);
    expectOneRefused(results);
  }
});

it("two owners removing each other at once leave exactly one owner", async () => {
  for (let round = 0; round < ROUNDS; round++) {
    const { companyId, owners } = await companyWithTwoOwners();
    const by = { actor: CLI_ACTOR, companyId };
    const results = await Promise.allSettled(owners.map((id) => removeUser(t.server.ctx.prisma, id, by)));
    expect(await ownerCount(companyId)).toBe(1);
    expectOneRefused(results);
  }
});

it("one owner demoted while the other is removed leaves exactly one owner", async () => {
  for (let round = 0; round < ROUNDS; round++) {
    const { companyId, owners } = await companyWithTwoOwners();
    const by = { actor: CLI_ACTOR, companyId };
    const results = await Promise.allSettled([changeRole(t.server.ctx.prisma, owners[0], { role: "member" }, by), removeUser(t.server.ctx.prisma, owners[1], by)]);
    expect(await ownerCount(companyId)).toBe(1);
    expectOneRefused(results);
  }
});
