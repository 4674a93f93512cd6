/**
 * The console's "Connected apps" and "Developer apps" pages (issue 32, CONTRACT "Connect with OAuth 2.1"), over HTTP,
 * against records in `oauth_records` written as docs/oauth-storage.md says the authorization server writes them:
 * owners and admins see every grant of the company, a member only their own; revoke (after a confirmation page)
 * deletes every record of the grant at once, audited; another company's grant or client is 404; CSRF refused;
 * developer apps for admins only, a confidential client's secret shown once and never stored in clear, bounded
 * inputs, delete takes the client's grants with it.
 */
import crypto from "node:crypto";
import { adminAndMemberOverHttp, consoleOverHttp, createConsoleUser, signInOverHttp, type ConsoleHttp, type ConsoleUser } from "./helpers/console-browser";
import { startTestServer, type TestServer } from "./helpers/test-server";

let t: TestServer;
let admin: ConsoleHttp;
let member: ConsoleHttp;
let adminUser: ConsoleUser;
let memberUser: ConsoleUser;

const prisma = () => t.server.ctx.prisma;
const hashed = (secret: string) => crypto.createHash("sha256").update(secret).digest("base64url");
const REST = "http://127.0.0.1/v1/ext";
const MCP = "http://127.0.0.1/v1/ext/mcp";

/** A client record as Dynamic Client Registration would store it (no company). */
async function insertClient(clientId: string, clientName: string): Promise<void> {
  await prisma().oAuthRecord.create({
    data: { model: "Client", id: clientId, clientId, payload: { client_id: clientId, client_name: clientName, redirect_uris: ["https://app.example/cb"] } },
  });
}

/**
 * A grant of `user` to `clientId` with an access token and a refresh token, as oidc-provider 9 stores them through
 * the adapter (docs/oauth-storage.md): the Grant payload with `openid.scope` and `resources`, bearer secrets by hash.
 */
async function insertGrant(user: { id: string; companyId: string }, clientId: string, scopes = { rest: "items:read tasks:read", mcp: "items:read" }) {
  const grantId = crypto.randomBytes(16).toString("base64url");
  const now = Math.floor(Date.now() / 1000);
  const access = crypto.randomBytes(32).toString("base64url");
  const refresh = crypto.randomBytes(32).toString("base64url");
  const expiresAt = new Date(Date.now() + 3600_000);
  const common = { companyId: user.companyId, clientId, grantId };
  await prisma().oAuthRecord.createMany({
    data: [
      {
        model: "Grant",
        id: grantId,
        ...common,
        expiresAt: new Date(Date.now() + 14 * 86400_000),
        payload: { kind: "Grant", jti: grantId, accountId: user.id, clientId, iat: now, openid: { scope: "openid offline_access" }, resources: { [REST]: scopes.rest, [MCP]: scopes.mcp } },
      },
      { model: "AccessToken", id: hashed(access), ...common, expiresAt, payload: { kind: "AccessToken", accountId: user.id, clientId, grantId, aud: REST, scope: scopes.rest, iat: now, exp: now + 3600 } },
      { model: "RefreshToken", id: hashed(refresh), ...common, expiresAt, payload: { kind: "RefreshToken", accountId: user.id, clientId, grantId, scope: `${scopes.rest} offline_access`, iat: now } },
    ],
  });
  return { grantId, access, refresh };
}

const recordsOf = (grantId: string) => prisma().oAuthRecord.count({ where: { OR: [{ grantId }, { model: "Grant", id: grantId }] } });

beforeAll(async () => {
  t = await startTestServer();
  ({ adminUser, admin, member } = await adminAndMemberOverHttp(t));
  const memberRow = await prisma().user.findFirstOrThrow({ where: { companyId: t.companyId, role: "member" }, orderBy: { createdAt: "desc" } });
  memberUser = { id: memberRow.id, email: memberRow.email, password: "", role: "member", companyId: t.companyId };
  await insertClient("https://claude.example/oauth/client.json", "Claude <script>alert(1)</script>");
}, 60_000);
afterAll(async () => {
  await t?.close();
});

describe("Connected apps", () => {
  it("owners and admins see every grant of the company with app, scopes, granter and last use; a member only their own", async () => {
    const mine = await insertGrant(adminUser, "https://claude.example/oauth/client.json");
    const theirs = await insertGrant(memberUser, "unregistered-client-id", { rest: "tasks:write", mcp: "" });
    await prisma().oAuthRecord.update({ where: { model_id: { model: "Grant", id: mine.grantId } }, data: { lastUsedAt: new Date("2026-11-27T08:15:00Z") } });

    const page = await admin.get("/console/connected-apps");
    expect(page.status).toBe(200);
    expect(page.text).toContain('<a href="/console/connected-apps" aria-current="page">Connected apps</a>');
    expect(page.text).toContain("Claude &lt;script&gt;alert(1)&lt;/script&gt;");
    expect(page.text).not.toContain("<script>alert(1)");
    expect(page.text).toContain("<td>items:read, offline_access, tasks:read</td>");
    expect(page.text).toContain("2026-11-27 08:15");
    expect(page.text).toContain(`<td>${adminUser.email}</td>`);
    expect(page.text).toContain("<td>unregistered-client-id</td>");
    expect(page.text).toContain(`<td>${memberUser.email}</td>`);
    expect(page.text).toContain(`/console/connected-apps/${mine.grantId}/revoke`);
    expect(page.text).toContain(`/console/connected-apps/${theirs.grantId}/revoke`);

    const own = await member.get("/console/connected-apps");
    expect(own.status).toBe(200);
    expect(own.text).toContain(`/console/connected-apps/${theirs.grantId}/revoke`);
    expect(own.text).not.toContain(mine.grantId);
    expect(own.text).not.toContain("Claude");
    // A member cannot reach another user's grant, by page or by POST.
    expect((await member.get(`/console/connected-apps/${mine.grantId}/revoke`)).status).toBe(404);
    expect((await member.post(`/console/connected-apps/${mine.grantId}/revoke`, new URLSearchParams(), "/console/connected-apps")).status).toBe(404);
    expect(await recordsOf(mine.grantId)).toBe(3);
  });

  it("revoke asks first, then deletes every record of the grant at once (and nothing else) and audits it", async () => {
    const doomed = await insertGrant(adminUser, "https://claude.example/oauth/client.json");
    const kept = await insertGrant(adminUser, "https://claude.example/oauth/client.json");
    const confirm = await admin.get(`/console/connected-apps/${doomed.grantId}/revoke`);
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain("Revoke access of &quot;Claude &lt;script&gt;");
    expect(confirm.text).toMatch(/<button type="submit" class="button-danger">Revoke access<\/button>/);
    expect(await recordsOf(doomed.grantId)).toBe(3);

    const res = await admin.post(`/console/connected-apps/${doomed.grantId}/revoke`, new URLSearchParams());
    expect(res.status).toBe(303);
    expect(res.location).toBe("/console/connected-apps");
    expect((await admin.get("/console/connected-apps")).text).toContain("revoked. Its tokens now get 401.");
    expect(await recordsOf(doomed.grantId)).toBe(0);
    expect(await prisma().oAuthRecord.count({ where: { id: { in: [hashed(doomed.access), hashed(doomed.refresh)] } } })).toBe(0);
    expect(await recordsOf(kept.grantId)).toBe(3);
    expect(await prisma().oAuthRecord.count({ where: { model: "Client", id: "https://claude.example/oauth/client.json" } })).toBe(1);
    // Gone: a second revoke is 404.
    expect((await admin.post(`/console/connected-apps/${doomed.grantId}/revoke`, new URLSearchParams(), "/console/connected-apps")).status).toBe(404);

    const entry = await prisma().auditEvent.findFirstOrThrow({ where: { action: "oauth_grant.revoked", targetId: doomed.grantId } });
    expect(entry).toMatchObject({ companyId: t.companyId, actorType: "user", actorLabel: adminUser.email, targetType: "oauth_grant" });
    expect(entry.details).toMatchObject({ client_id: "https://claude.example/oauth/client.json", scopes: ["items:read", "offline_access", "tasks:read"], granted_by: adminUser.id });
    expect(JSON.stringify(entry)).not.toContain(doomed.access);
    expect(JSON.stringify(entry)).not.toContain(doomed.refresh);
    expect((await admin.get("/console/audit")).text).toContain("Connected app revoked");
  });

  it("a member revokes their own grant", async () => {
    const own = await insertGrant(memberUser, "unregistered-client-id");
    expect((await member.get(`/console/connected-apps/${own.grantId}/revoke`)).status).toBe(200);
    expect((await member.post(`/console/connected-apps/${own.grantId}/revoke`, new URLSearchParams())).status).toBe(303);
    expect(await recordsOf(own.grantId)).toBe(0);
  });

  it("another company's grant is 404 and stays; an expired grant is absent", async () => {
    const other = await t.newCompany("Other OAuth Co");
    const outsider = await createConsoleUser(t, "owner", other.companyId);
    const theirs = await insertGrant(outsider, "unregistered-client-id");
    expect((await admin.get("/console/connected-apps")).text).not.toContain(theirs.grantId);
    expect((await admin.get(`/console/connected-apps/${theirs.grantId}/revoke`)).status).toBe(404);
    expect((await admin.post(`/console/connected-apps/${theirs.grantId}/revoke`, new URLSearchParams(), "/console/connected-apps")).status).toBe(404);
    expect(await recordsOf(theirs.grantId)).toBe(3);
    const outsiderPage = await (await consoleOverHttp(t.url, outsider)).get("/console/connected-apps");
    expect(outsiderPage.text).toContain(theirs.grantId);
    expect(outsiderPage.text).not.toContain(adminUser.email);

    const stale = await insertGrant(adminUser, "unregistered-client-id");
    await prisma().oAuthRecord.update({ where: { model_id: { model: "Grant", id: stale.grantId } }, data: { expiresAt: new Date(Date.now() - 1000) } });
    expect((await admin.get("/console/connected-apps")).text).not.toContain(stale.grantId);
    expect((await admin.get(`/console/connected-apps/${stale.grantId}/revoke`)).status).toBe(404);
  });

  it("a POST without the CSRF token, with a forged one, or from another origin is 403 and revokes nothing", async () => {
    const grant = await insertGrant(adminUser, "unregistered-client-id");
    const { cookie } = await signInOverHttp(t.url, adminUser.email, adminUser.password);
    const post = (origin: string, form: URLSearchParams) =>
      fetch(`${t.url}/console/connected-apps/${grant.grantId}/revoke`, {
        method: "POST",
        body: form,
        redirect: "manual",
        headers: { cookie: cookie!, origin, "content-type": "application/x-www-form-urlencoded" },
      });
    expect((await post(t.url, new URLSearchParams())).status).toBe(403);
    expect((await post(t.url, new URLSearchParams({ _csrf: "forged-token" }))).status).toBe(403);
    expect((await post("https://evil.example", new URLSearchParams())).status).toBe(403);
    expect(await recordsOf(grant.grantId)).toBe(3);
  });
});

describe("Developer apps", () => {
  const register = (form: Record<string, string>) => admin.post("/console/developer-apps", new URLSearchParams(form), "/console/developer-apps");

  it("is for owners and admins: a member has no menu entry and gets 403", async () => {
    const page = await member.get("/console/connected-apps");
    expect(page.text).not.toContain('href="/console/developer-apps"');
    expect((await admin.get("/console/connected-apps")).text).toContain('href="/console/developer-apps"');
    expect((await member.get("/console/developer-apps")).status).toBe(403);
    const before = await prisma().oAuthRecord.count({ where: { model: "Client" } });
    const res = await member.post("/console/developer-apps", new URLSearchParams({ name: "Nope", redirect_uris: "https://x.example/cb", type: "public" }), "/console/connected-apps");
    expect(res.status).toBe(403);
    expect(await prisma().oAuthRecord.count({ where: { model: "Client" } })).toBe(before);
  });

  it("registers a confidential client: the secret is shown once and stored only as its hash; the payload is client metadata", async () => {
    const res = await register({ name: "Acme sync", redirect_uris: "https://acme.example/oauth/callback\r\nhttp://127.0.0.1:8765/cb\n\n", type: "confidential" });
    expect(res.status).toBe(303);
    expect(res.location).toBe("/console/developer-apps");
    const page = await admin.get("/console/developer-apps");
    const secret = /id="one-time-secret"[^>]* value="([^"]+)"/.exec(page.text)?.[1];
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(page.text).toContain('<label for="one-time-secret">Client secret</label>');
    const record = await prisma().oAuthRecord.findFirstOrThrow({ where: { model: "Client", companyId: t.companyId, payload: { path: ["client_name"], equals: "Acme sync" } } });
    expect(record.clientId).toBe(record.id);
    expect(record.payload).toEqual({
      client_id: record.id,
      client_name: "Acme sync",
      redirect_uris: ["https://acme.example/oauth/callback", "http://127.0.0.1:8765/cb"],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
      client_id_issued_at: expect.any(Number),
      stageline_owner: true,
      client_secret_sha256: hashed(secret!),
    });
    expect(page.text).toContain(record.id);

    // Shown once; never stored in clear anywhere in oauth_records, the audit log or the sessions' flash.
    const again = await admin.get("/console/developer-apps");
    expect(again.text).not.toContain(secret!);
    expect(again.text).toContain("Acme sync");
    const rows = await prisma().oAuthRecord.findMany();
    expect(JSON.stringify(rows)).not.toContain(secret!);
    const audit = await prisma().auditEvent.findMany({ where: { targetId: record.id } });
    expect(audit.map((e) => e.action)).toEqual(["oauth_client.created"]);
    expect(audit[0]).toMatchObject({ actorLabel: adminUser.email, targetLabel: "Acme sync", details: { type: "confidential" } });
    expect(JSON.stringify(audit)).not.toContain(secret!);
    expect(JSON.stringify(await prisma().consoleSession.findMany({ select: { flash: true } }))).not.toContain(secret!);
  });

  it("registers a public client (PKCE, token_endpoint_auth_method none) without a secret", async () => {
    expect((await register({ name: "CLI tool", redirect_uris: "http://[::1]/callback", type: "public" })).status).toBe(303);
    const page = await admin.get("/console/developer-apps");
    expect(page.text).not.toContain("one-time-secret");
    expect(page.text).toContain("It is a public client");
    const record = await prisma().oAuthRecord.findFirstOrThrow({ where: { model: "Client", payload: { path: ["client_name"], equals: "CLI tool" } } });
    expect(record.payload).toMatchObject({ token_endpoint_auth_method: "none", redirect_uris: ["http://[::1]/callback"], stageline_owner: true });
    expect(record.payload).not.toHaveProperty("client_secret_sha256");
    expect(record.payload).not.toHaveProperty("client_secret");
  });

  it.each([
    ["empty name", { name: "", redirect_uris: "https://a.example/cb", type: "public" }, "name", "Enter the app&#39;s name."],
    ["name over 100 characters", { name: "x".repeat(101), redirect_uris: "https://a.example/cb", type: "public" }, "name", "at most 100 characters"],
    ["Plain http", { name: "Plain http", redirect_uris: "http://a.example/cb", type: "public" }, "redirect_uris", "use https, or http only on a loopback address"],
    ["Fragment", { name: "Fragment", redirect_uris: "https://a.example/cb#x", type: "public" }, "redirect_uris", "has a fragment"],
    ["Userinfo", { name: "Userinfo", redirect_uris: "http://evil.example@127.0.0.1/cb", type: "public" }, "redirect_uris", "carries a user name or password"],
    ["Numeric host", { name: "Numeric host", redirect_uris: "http://0x7f000001/cb", type: "public" }, "redirect_uris", "has a numeric host form that is read as 127.0.0.1"],
    ["Backslash", { name: "Backslash", redirect_uris: "https://a.example\\@b", type: "public" }, "redirect_uris", "contains a backslash"],
    ["Tab", { name: "Tab", redirect_uris: "http://127.0.0.1/c\tb", type: "public" }, "redirect_uris", "contains a space or a control character"],
    ["Relative", { name: "Relative", redirect_uris: "/cb", type: "public" }, "redirect_uris", "is not an absolute URL"],
    ["Wildcard", { name: "Wildcard", redirect_uris: "https://*.example.com/cb", type: "public" }, "redirect_uris", "wildcards are not allowed"],
    ["Too many", { name: "Too many", redirect_uris: Array.from({ length: 11 }, (_, i) => `https://a.example/cb${i}`).join("\n"), type: "public" }, "redirect_uris", "at most 10 redirect URIs"],
    ["Too long", { name: "Too long", redirect_uris: `https://a.example/${"x".repeat(2000)}`, type: "public" }, "redirect_uris", "at most 2000 characters"],
    ["None", { name: "None", redirect_uris: " \n ", type: "public" }, "redirect_uris", "at least one redirect URI"],
    ["No type", { name: "No type", redirect_uris: "https://a.example/cb", type: "hybrid" }, "type-public", "public or confidential"],
  ])("refuses the form %s on its field (400) and stores nothing", async (_case, form, field, message) => {
    const before = await prisma().oAuthRecord.count({ where: { model: "Client" } });
    const res = await register(form);
    expect(res.status).toBe(400);
    expect(res.text).toContain(`href="#${field}"`);
    expect(res.text).toContain(message);
    expect(await prisma().oAuthRecord.count({ where: { model: "Client" } })).toBe(before);
  });

  it("deletes a client after a confirmation page, with every grant and token issued to it; another company's client is 404", async () => {
    expect((await register({ name: "Doomed app", redirect_uris: "https://doomed.example/cb", type: "public" })).status).toBe(303);
    const client = await prisma().oAuthRecord.findFirstOrThrow({ where: { model: "Client", payload: { path: ["client_name"], equals: "Doomed app" } } });
    const g1 = await insertGrant(adminUser, client.id);
    const g2 = await insertGrant(memberUser, client.id);
    const unrelated = await insertGrant(adminUser, "unregistered-client-id");

    const other = await t.newCompany("Other Dev Co");
    const outsider = await consoleOverHttp(t.url, await createConsoleUser(t, "admin", other.companyId));
    expect((await outsider.get(`/console/developer-apps/${client.id}/delete`)).status).toBe(404);
    expect((await outsider.post(`/console/developer-apps/${client.id}/delete`, new URLSearchParams(), "/console/developer-apps")).status).toBe(404);
    expect((await outsider.get("/console/developer-apps")).text).not.toContain(client.id);
    expect((await member.get(`/console/developer-apps/${client.id}/delete`)).status).toBe(403);

    const confirm = await admin.get(`/console/developer-apps/${client.id}/delete`);
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain("Delete app &quot;Doomed app&quot;?");
    const res = await admin.post(`/console/developer-apps/${client.id}/delete`, new URLSearchParams());
    expect(res.status).toBe(303);
    expect(await prisma().oAuthRecord.count({ where: { OR: [{ clientId: client.id }, { id: client.id }] } })).toBe(0);
    expect(await recordsOf(g1.grantId)).toBe(0);
    expect(await recordsOf(g2.grantId)).toBe(0);
    expect(await recordsOf(unrelated.grantId)).toBe(3);
    expect((await admin.get("/console/developer-apps")).text).not.toContain(client.id);
    const audit = await prisma().auditEvent.findMany({ where: { targetId: client.id }, orderBy: { createdAt: "asc" } });
    expect(audit.map((e) => e.action)).toEqual(["oauth_client.created", "oauth_client.deleted"]);
  });

  it("a register or delete POST without the CSRF token is 403 and changes nothing", async () => {
    expect((await register({ name: "Kept app", redirect_uris: "https://kept.example/cb", type: "public" })).status).toBe(303);
    const kept = await prisma().oAuthRecord.findFirstOrThrow({ where: { model: "Client", payload: { path: ["client_name"], equals: "Kept app" } } });
    const { cookie } = await signInOverHttp(t.url, adminUser.email, adminUser.password);
    const post = (path: string, form: URLSearchParams) =>
      fetch(`${t.url}${path}`, { method: "POST", body: form, redirect: "manual", headers: { cookie: cookie!, origin: t.url, "content-type": "application/x-www-form-urlencoded" } });
    const before = await prisma().oAuthRecord.count({ where: { model: "Client" } });
    expect((await post("/console/developer-apps", new URLSearchParams({ name: "Forged", redirect_uris: "https://x.example/cb", type: "public" }))).status).toBe(403);
    expect((await post(`/console/developer-apps/${kept.id}/delete`, new URLSearchParams({ _csrf: "forged-token" }))).status).toBe(403);
    expect(await prisma().oAuthRecord.count({ where: { model: "Client" } })).toBe(before);
  });

  it("a client registered by Dynamic Client Registration (no company) is not listed nor deletable", async () => {
    expect((await admin.get("/console/developer-apps")).text).not.toContain("claude.example");
    expect((await admin.get(`/console/developer-apps/${encodeURIComponent("https://claude.example/oauth/client.json")}/delete`)).status).toBe(404);
  });
});
