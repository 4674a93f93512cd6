/**
 * OAuth grants follow their user (issue 32; CONTRACT "Connect with OAuth 2.1": a grant never gives an app more than
 * its user may do). A security review found that a demoted admin's app kept `hooks:manage` through its access token and
 * every refresh, and that a removed user's tokens kept working until they expired. Now `changeRole` revokes every
 * grant the user gave when the role goes down, and `removeUser` revokes them with the user: the tokens stop at once.
 * And the token lookup itself refuses a token whose user is gone from its company (review: defence in depth).
 */
import { SCOPES } from "@stageline/shared";
import { CLI_ACTOR } from "../src/services/audit-log";
import { changeRole, createUser, removeUser } from "../src/services/users";
import { bearer, issueAccessToken } from "./helpers/oauth-records";
import { startTestServer, type TestServer } from "./helpers/test-server";

let t: TestServer;
let seq = 0;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t?.close();
});

const by = { actor: CLI_ACTOR };

/** A new user of the test company with `role`, and an access token (all API scopes, REST) of a grant they gave. */
async function userWithToken(role: "owner" | "admin" | "member") {
  const user = await createUser(t.server.ctx.prisma, { company_id: t.companyId, email: `u${++seq}-${role}@grants.example`, role }, by);
  const issued = await issueAccessToken(t.server.ctx.prisma, {
    companyId: t.companyId,
    accountId: user.id,
    scope: SCOPES.join(" "),
    resource: "rest",
    origin: t.server.ctx.publicOrigin(),
  });
  return { user, ...issued };
}

const webhooks = (token: string) => t.request("GET", "/v1/ext/webhooks", undefined, null, bearer(token));
const recordsOf = (grantId: string) =>
  t.server.ctx.prisma.oAuthRecord.count({ where: { OR: [{ grantId }, { model: "Grant", id: grantId }] } });

describe("OAuth grants follow their user", () => {
  it("demoting an admin revokes the grants they gave: the app's token is refused at once", async () => {
    const admin = await userWithToken("admin");
    const bystander = await userWithToken("admin");
    expect((await webhooks(admin.token)).status).toBe(200);
    await changeRole(t.server.ctx.prisma, admin.user.id, { role: "member" }, by);
    const res = await webhooks(admin.token);
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/error="invalid_token"/);
    expect(await recordsOf(admin.grantId)).toBe(0);
    // Another user's grant is untouched.
    expect((await webhooks(bystander.token)).status).toBe(200);
    const audit = await t.server.ctx.prisma.auditEvent.findFirst({ where: { action: "user.role_changed", targetId: admin.user.id } });
    expect(audit?.details).toMatchObject({ from: "admin", to: "member", oauth_grants_revoked: "1" });
  });

  it("a promotion keeps the user's grants", async () => {
    const member = await userWithToken("member");
    await changeRole(t.server.ctx.prisma, member.user.id, { role: "admin" }, by);
    expect((await t.request("GET", "/v1/ext/me", undefined, null, bearer(member.token))).status).toBe(200);
    expect(await recordsOf(member.grantId)).toBeGreaterThan(0);
  });

  it("removing a user revokes their grants with them", async () => {
    const member = await userWithToken("member");
    const second = await issueAccessToken(t.server.ctx.prisma, {
      companyId: t.companyId,
      accountId: member.user.id,
      scope: "items:read",
      resource: "mcp",
      origin: t.server.ctx.publicOrigin(),
    });
    const bystander = await userWithToken("member");
    expect((await t.request("GET", "/v1/ext/me", undefined, null, bearer(member.token))).status).toBe(200);
    await removeUser(t.server.ctx.prisma, member.user.id, by);
    expect((await t.request("GET", "/v1/ext/me", undefined, null, bearer(member.token))).status).toBe(401);
    expect(await recordsOf(member.grantId)).toBe(0);
    expect(await recordsOf(second.grantId)).toBe(0);
    expect((await t.request("GET", "/v1/ext/me", undefined, null, bearer(bystander.token))).status).toBe(200);
  });

  // Defence in depth (db/oauth-tokens.ts): the token lookup itself requires the grant's user in the token's company,
  // so a token stops even if the grant cleanup above were ever missed. The user rows change by SQL here, bypassing
  // the services (their grants stay stored).
  it("a token stops working once its user row is gone, though its grant records remain", async () => {
    const member = await userWithToken("member");
    const bystander = await userWithToken("member");
    expect((await t.request("GET", "/v1/ext/me", undefined, null, bearer(member.token))).status).toBe(200);
    await t.server.ctx.db.sql.query(`DELETE FROM users WHERE id = $1`, [member.user.id]);
    const res = await t.request("GET", "/v1/ext/me", undefined, null, bearer(member.token));
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/error="invalid_token"/);
    expect(await recordsOf(member.grantId)).toBeGreaterThan(0);
    expect((await t.request("GET", "/v1/ext/me", undefined, null, bearer(bystander.token))).status).toBe(200);
  });

  it("a token stops working once its user belongs to another company", async () => {
    const member = await userWithToken("member");
    const other = await t.newCompany("Elsewhere Co");
    expect((await t.request("GET", "/v1/ext/me", undefined, null, bearer(member.token))).status).toBe(200);
    await t.server.ctx.db.sql.query(`UPDATE users SET company_id = $2 WHERE id = $1`, [member.user.id, other.companyId]);
    expect((await t.request("GET", "/v1/ext/me", undefined, null, bearer(member.token))).status).toBe(401);
    expect(await recordsOf(member.grantId)).toBeGreaterThan(0);
  });
});
