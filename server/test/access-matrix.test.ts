/**
 * The access matrix (issue 12; spec "Authentication", CONTRACT "Errors" and "Scopes and limits"): every endpoint ×
 * every scope × no key, a revoked key, an expired key, an inactive company, and another company's ids. Each cell
 * asserts the exact status the contract gives: 401 for a missing, revoked or expired key; 402 for an inactive
 * subscription; 403 for a missing scope; 404 for another company's ids; the endpoint's success status otherwise.
 * Issue 32: an OAuth access token (records written per docs/oauth-storage.md, helpers/oauth-records.ts) with each
 * scope is tried on every endpoint like a key with that scope, and an expired token, a token for the MCP endpoint, a
 * revoked grant's token and another company's token like their key counterparts.
 * Issue 40: the console's Developers pages (a session, not a key) × signed out, each role and another company's
 * admin: the lowest role each allows, 403 below it, 404 for another company's ids, sign-in when signed out.
 */
import { SCOPES, type Scope } from "@stageline/shared";
import type { Role } from "../src/services/users";
import { consoleOverHttp, createConsoleUser, type ConsoleHttp } from "./helpers/console-browser";
import { bearer, issueAccessToken, revokeGrant } from "./helpers/oauth-records";
import { startTestServerWithRateLimit, type TestServer } from "./helpers/test-server";

interface Fixture {
  itemId: string;
  taskId: string;
  noteId: string;
  pipelineId: string;
  stageId: string;
  webhookId: string;
  deliveryId: string;
  /** The item.created event of the fixture's item. */
  eventId: string;
}

interface Endpoint {
  method: string;
  path: (f: Fixture) => string;
  /** The scopes any one of which allows the call; "any" for any valid key. */
  scopes: Scope[] | "any";
  /** A valid body for the call (fresh per call). */
  body?: (f: Fixture) => unknown;
  /** Status of a successful call. */
  success: number;
  /** Whether the path names resources (so another company's ids are 404). */
  ids: boolean;
  /** Status for another company's key when the body names this company's resources (422: they do not resolve). */
  foreignBody?: number;
  /** An allowed scope that still cannot read this resource, and the answer it gets (an event of a name its scopes do not read: 404). */
  unreadableWith?: { scope: Scope; status: number; code: string };
}

const ENDPOINTS: Endpoint[] = [
  { method: "GET", path: () => "/me", scopes: "any", success: 200, ids: false },
  { method: "GET", path: () => "/users", scopes: "any", success: 200, ids: false },
  { method: "GET", path: () => "/pipelines", scopes: "any", success: 200, ids: false },
  { method: "GET", path: (f) => `/pipelines/${f.pipelineId}/stages`, scopes: "any", success: 200, ids: true },
  { method: "GET", path: (f) => `/pipelines/${f.pipelineId}/stages/${f.stageId}/statuses`, scopes: "any", success: 200, ids: true },
  { method: "GET", path: (f) => `/pipelines/${f.pipelineId}/fields`, scopes: "any", success: 200, ids: true },
  { method: "GET", path: () => "/items", scopes: ["items:read"], success: 200, ids: false },
  { method: "POST", path: () => "/items", scopes: ["items:write"], success: 201, ids: false, foreignBody: 422, body: (f) => ({ name: "Matrix", pipeline_id: f.pipelineId, stage_id: f.stageId }) },
  { method: "POST", path: () => "/items/check-duplicates", scopes: ["items:read"], success: 200, ids: false, foreignBody: 422, body: (f) => ({ pipeline_id: f.pipelineId, metadata: { email: "m@example.com" } }) },
  { method: "GET", path: (f) => `/items/${f.itemId}`, scopes: ["items:read"], success: 200, ids: true },
  { method: "PATCH", path: (f) => `/items/${f.itemId}`, scopes: ["items:write"], success: 200, ids: true, body: () => ({ name: `Renamed ${Math.random()}` }) },
  { method: "DELETE", path: (f) => `/items/${f.itemId}`, scopes: ["items:write"], success: 204, ids: true },
  // A fresh email per call: no match, so the upsert creates (201); another company's key cannot resolve the pipeline.
  { method: "POST", path: () => "/items/upsert", scopes: ["items:write"], success: 201, ids: false, foreignBody: 422, body: (f) => ({ name: "Matrix upsert", pipeline_id: f.pipelineId, stage_id: f.stageId, metadata: { email: `upsert-${Math.random()}@example.com` } }) },
  // Batches (CONTRACT "Batch writes"): the envelope answers 200; another company's key gets 200 with that operation's
  // own 422 (its pipeline or task id does not resolve), checked in batch-writes.test.ts.
  { method: "POST", path: () => "/items/batch", scopes: ["items:write"], success: 200, ids: false, body: (f) => ({ operations: [{ op: "create", name: "Matrix batch", pipeline_id: f.pipelineId, stage_id: f.stageId }, { op: "update", item_id: f.itemId, name: `Batch ${Math.random()}` }] }) },
  { method: "POST", path: () => "/tasks/batch", scopes: ["tasks:write"], success: 200, ids: false, body: (f) => ({ operations: [{ op: "create", title: "Call", due_at: "2026-12-01T09:00:00Z", assigned_to: "ada" }, { op: "update", task_id: f.taskId, title: `Call ${Math.random()}` }] }) },
  { method: "GET", path: () => "/tasks", scopes: ["tasks:read"], success: 200, ids: false },
  { method: "POST", path: () => "/tasks", scopes: ["tasks:write"], success: 201, ids: false, body: () => ({ title: "Call", due_at: "2026-12-01T09:00:00Z", assigned_to: "ada" }) },
  { method: "GET", path: (f) => `/tasks/${f.taskId}`, scopes: ["tasks:read"], success: 200, ids: true },
  { method: "PATCH", path: (f) => `/tasks/${f.taskId}`, scopes: ["tasks:write"], success: 200, ids: true, body: () => ({ title: `Call ${Math.random()}` }) },
  { method: "GET", path: () => "/notes", scopes: ["items:read"], success: 200, ids: false },
  { method: "POST", path: () => "/notes", scopes: ["items:write"], success: 201, ids: false, foreignBody: 422, body: (f) => ({ item_id: f.itemId, body: "Matrix note" }) },
  { method: "GET", path: (f) => `/notes/${f.noteId}`, scopes: ["items:read"], success: 200, ids: true },
  { method: "PATCH", path: (f) => `/notes/${f.noteId}`, scopes: ["items:write"], success: 200, ids: true, body: () => ({ body: `Edited ${Math.random()}` }) },
  { method: "DELETE", path: (f) => `/notes/${f.noteId}`, scopes: ["items:write"], success: 204, ids: true },
  { method: "GET", path: () => "/webhooks/sample/notes", scopes: ["hooks:manage", "items:read"], success: 200, ids: false },
  { method: "GET", path: () => "/webhooks/sample/items", scopes: ["hooks:manage", "items:read"], success: 200, ids: false },
  { method: "GET", path: () => "/webhooks/sample/tasks", scopes: ["hooks:manage", "tasks:read"], success: 200, ids: false },
  { method: "POST", path: () => "/webhooks", scopes: ["hooks:manage"], success: 201, ids: false, body: () => ({ target_url: "http://127.0.0.1:9/matrix", event: "task.created" }) },
  { method: "GET", path: () => "/webhooks", scopes: ["hooks:manage"], success: 200, ids: false },
  { method: "POST", path: (f) => `/webhooks/${f.webhookId}/rotate-secret`, scopes: ["hooks:manage"], success: 200, ids: true },
  { method: "GET", path: (f) => `/webhooks/${f.webhookId}/deliveries`, scopes: ["hooks:manage"], success: 200, ids: true },
  { method: "POST", path: (f) => `/webhooks/${f.webhookId}/deliveries/${f.deliveryId}/redeliver`, scopes: ["hooks:manage"], success: 202, ids: true },
  { method: "POST", path: (f) => `/webhooks/${f.webhookId}/replay`, scopes: ["hooks:manage"], success: 202, ids: true, body: () => ({ since: "2020-01-01T00:00:00Z" }) },
  { method: "DELETE", path: (f) => `/webhooks/${f.webhookId}`, scopes: ["hooks:manage"], success: 204, ids: true },
  { method: "GET", path: () => "/events", scopes: ["items:read", "tasks:read"], success: 200, ids: false },
  { method: "GET", path: (f) => `/events/${f.eventId}`, scopes: ["items:read", "tasks:read"], success: 200, ids: true, unreadableWith: { scope: "tasks:read", status: 404, code: "not_found" } },
];

describe("access matrix", () => {
  let t: TestServer;
  let other: { companyId: string; apiKey: string };
  let keys: { revoked: string; expired: string; inactive: string; byScope: Record<Scope, string> };
  let tokens: { expired: string; mcp: string; revoked: string; inactive: string; other: string; byScope: Record<Scope, string> };

  /** Fresh resources of the main company (a DELETE or rotation in one cell must not affect the next). */
  async function fixture(): Promise<Fixture> {
    const stage = t.pipeline.stages[0]!;
    const hook = await t.request("POST", "/v1/ext/webhooks", { target_url: "http://127.0.0.1:9/matrix", event: "item.created" });
    const item = await t.request("POST", "/v1/ext/items", { name: "Matrix item", pipeline_id: t.pipeline.id, stage_id: stage.id });
    const task = await t.request("POST", "/v1/ext/tasks", { title: "Matrix task", due_at: "2026-12-01T09:00:00Z", assigned_to: "ada" });
    const note = await t.request("POST", "/v1/ext/notes", { item_id: item.body.item_id, body: "Matrix note" });
    const delivery = await t.server.ctx.prisma.webhookDelivery.findFirstOrThrow({ where: { subscriptionId: hook.body.id } });
    return {
      itemId: item.body.item_id, taskId: task.body.task_id, noteId: note.body.note_id, pipelineId: t.pipeline.id, stageId: stage.id, webhookId: hook.body.id,
      deliveryId: delivery.id, eventId: delivery.eventId,
    };
  }

  async function call(e: Endpoint, key: string | null, f: Fixture) {
    return t.request(e.method, `/v1/ext${e.path(f)}`, e.body?.(f), key);
  }

  /** The call with an access token as `Authorization: Bearer` (no API key). */
  async function callWithToken(e: Endpoint, token: string, f: Fixture) {
    return t.request(e.method, `/v1/ext${e.path(f)}`, e.body?.(f), null, bearer(token));
  }

  beforeAll(async () => {
    t = await startTestServerWithRateLimit(100_000);
    other = await t.newCompany("Other Co");
    const revoked = await t.newKey();
    await t.server.ctx.prisma.apiKey.update({ where: { id: revoked.id }, data: { revokedAt: new Date() } });
    const expired = await t.newKey(undefined, { expiresAt: new Date(Date.now() - 1_000) });
    const inactive = await t.newCompany("Lapsed Co");
    await t.server.ctx.prisma.company.update({ where: { id: inactive.companyId }, data: { subscriptionActive: false } });
    const byScope = {} as Record<Scope, string>;
    for (const scope of SCOPES) byScope[scope] = (await t.newKey([scope])).key;
    keys = { revoked: revoked.key, expired: expired.key, inactive: inactive.apiKey, byScope };
    const origin = t.server.ctx.publicOrigin();
    const issue = async (companyId: string, scope: string, more: { resource?: "rest" | "mcp"; expiresIn?: number } = {}) =>
      (await issueAccessToken(t.server.ctx.prisma, { companyId, scope, origin, resource: more.resource ?? "rest", expiresIn: more.expiresIn })).token;
    const all = SCOPES.join(" ");
    const revokedGrant = await issueAccessToken(t.server.ctx.prisma, { companyId: t.companyId, scope: all, origin, resource: "rest" });
    await revokeGrant(t.server.ctx.prisma, revokedGrant.grantId);
    const tokensByScope = {} as Record<Scope, string>;
    for (const scope of SCOPES) tokensByScope[scope] = await issue(t.companyId, `${scope} offline_access`);
    tokens = {
      expired: await issue(t.companyId, all, { expiresIn: -1 }),
      mcp: await issue(t.companyId, all, { resource: "mcp" }),
      revoked: revokedGrant.token,
      inactive: await issue(inactive.companyId, all),
      other: await issue(other.companyId, all),
      byScope: tokensByScope,
    };
  });
  // Every cell's REST hooks go when it ends: the fixture's hook subscribes to item.created, so without this each
  // fixture's item would fan out to every earlier cell's hook (about 127,000 deliveries over the matrix's 504 cells,
  // all attempted against a closed port), and later cells would test a company with hundreds of subscriptions.
  afterEach(async () => {
    const hooks = await t.request("GET", "/v1/ext/webhooks?limit=100");
    expect(hooks.status).toBe(200);
    for (const hook of hooks.body as { id: string }[]) expect((await t.request("DELETE", `/v1/ext/webhooks/${hook.id}`)).status).toBe(204);
  });
  afterAll(async () => {
    await t?.close();
  });

  describe.each(ENDPOINTS.map((e) => [`${e.method} ${e.path({ itemId: "{item}", taskId: "{task}", noteId: "{note}", pipelineId: "{pipeline}", stageId: "{stage}", webhookId: "{webhook}", deliveryId: "{delivery}", eventId: "{event}" })}`, e] as const))(
    "%s",
    (_name, e) => {
      it("401 without a key, with a revoked or an expired key; 402 for an inactive company", async () => {
        const f = await fixture();
        expect((await call(e, null, f)).status).toBe(401);
        expect((await call(e, keys.revoked, f)).status).toBe(401);
        expect((await call(e, keys.expired, f)).status).toBe(401);
        expect((await call(e, keys.inactive, f)).status).toBe(402);
      });

      it.each([...SCOPES])("with only %s: success if that scope allows the call, else 403", async (scope) => {
        const f = await fixture();
        const allowed = e.scopes === "any" || e.scopes.includes(scope);
        const res = await call(e, keys.byScope[scope], f);
        const expected = !allowed
          ? { status: 403, code: "insufficient_scope" }
          : e.unreadableWith?.scope === scope
            ? { status: e.unreadableWith.status, code: e.unreadableWith.code }
            : { status: e.success, code: undefined };
        expect({ status: res.status, code: res.body?.code }).toEqual(expected);
      });

      it("401 invalid_token with an expired token, a token for the MCP endpoint, a revoked grant's token; 402 for an inactive company", async () => {
        const f = await fixture();
        for (const token of [tokens.expired, tokens.mcp, tokens.revoked]) {
          const res = await callWithToken(e, token, f);
          expect({ status: res.status, code: res.body?.code }).toEqual({ status: 401, code: "invalid_api_key" });
          expect(res.headers.get("www-authenticate")).toMatch(/^Bearer error="invalid_token", /);
        }
        expect((await callWithToken(e, tokens.inactive, f)).status).toBe(402);
      });

      it.each([...SCOPES])("with an access token of only %s (and offline_access): as a key with that scope", async (scope) => {
        const f = await fixture();
        const allowed = e.scopes === "any" || e.scopes.includes(scope);
        const res = await callWithToken(e, tokens.byScope[scope], f);
        const expected = !allowed
          ? { status: 403, code: "insufficient_scope" }
          : e.unreadableWith?.scope === scope
            ? { status: e.unreadableWith.status, code: e.unreadableWith.code }
            : { status: e.success, code: undefined };
        expect({ status: res.status, code: res.body?.code }).toEqual(expected);
        if (!allowed) {
          const needed = (e.scopes as Scope[])[0]!;
          expect(res.headers.get("www-authenticate")).toBe(
            `Bearer error="insufficient_scope", scope="${needed}", resource_metadata="${t.server.ctx.publicOrigin()}/.well-known/oauth-protected-resource/v1/ext"`,
          );
        }
      });

      const foreign = e.ids ? "404 not_found" : e.foreignBody ? "422 invalid_reference" : "its own data";
      it(`answers another company's all-scope key with ${foreign}`, async () => {
        const f = await fixture();
        const res = await call(e, other.apiKey, f);
        if (e.ids) expect({ status: res.status, code: res.body?.code }).toEqual({ status: 404, code: "not_found" });
        else if (e.foreignBody) expect({ status: res.status, code: res.body?.code }).toEqual({ status: e.foreignBody, code: "invalid_reference" });
        else expect(res.status).toBe(e.success);
      });

      it(`answers another company's all-scope access token with ${foreign}`, async () => {
        const f = await fixture();
        const res = await callWithToken(e, tokens.other, f);
        if (e.ids) expect({ status: res.status, code: res.body?.code }).toEqual({ status: 404, code: "not_found" });
        else if (e.foreignBody) expect({ status: res.status, code: res.body?.code }).toEqual({ status: e.foreignBody, code: "invalid_reference" });
        else expect(res.status).toBe(e.success);
      });
    },
  );
});

/** A console page of the Developers part (issue 40 item 4), by the session that asks. */
interface ConsolePage {
  method: "GET" | "POST";
  path: (f: Fixture) => string;
  /** The lowest role allowed (members read; owners and admins act). */
  minRole: Role;
  /** Status of a successful call (a POST redirects: post/redirect/get). */
  success: number;
  /** Whether the path names the company's resources (another company's admin gets 404). */
  ids: boolean;
}

const CONSOLE_PAGES: ConsolePage[] = [
  { method: "GET", path: () => "/console/events", minRole: "member", success: 200, ids: false },
  { method: "GET", path: (f) => `/console/events?resource_id=${f.itemId}&event=item.created&since=2020-01-01T00:00`, minRole: "member", success: 200, ids: false },
  { method: "GET", path: (f) => `/console/events/${f.eventId}`, minRole: "member", success: 200, ids: true },
  { method: "POST", path: (f) => `/console/events/${f.eventId}/deliveries/${f.deliveryId}/resend`, minRole: "admin", success: 303, ids: true },
];

const ROLES: Role[] = ["member", "admin", "owner"];
const RANK: Record<Role, number> = { member: 0, admin: 1, owner: 2 };

describe("console access matrix (Developers pages)", () => {
  let t: TestServer;
  let sessions: Record<Role, ConsoleHttp>;
  let otherAdmin: ConsoleHttp;
  let f: Fixture;

  beforeAll(async () => {
    t = await startTestServerWithRateLimit(100_000);
    sessions = {} as Record<Role, ConsoleHttp>;
    for (const role of ROLES) sessions[role] = await consoleOverHttp(t.url, await createConsoleUser(t, role));
    const other = await t.newCompany("Other Co");
    otherAdmin = await consoleOverHttp(t.url, await createConsoleUser(t, "admin", other.companyId));
    const hook = await t.request("POST", "/v1/ext/webhooks", { target_url: "http://127.0.0.1:9/matrix", event: "item.created" });
    const item = await t.request("POST", "/v1/ext/items", { name: "Matrix item", pipeline_id: t.pipeline.id, stage_id: t.pipeline.stages[0]!.id });
    const delivery = await t.server.ctx.prisma.webhookDelivery.findFirstOrThrow({ where: { subscriptionId: hook.body.id } });
    f = { itemId: item.body.item_id, taskId: "", noteId: "", pipelineId: t.pipeline.id, stageId: "", webhookId: hook.body.id, deliveryId: delivery.id, eventId: delivery.eventId };
  }, 120_000); // a server and four console users (password hashing) on a shared, loaded machine
  afterAll(async () => {
    await t?.close();
  });

  const call = (page: ConsolePage, who: ConsoleHttp) =>
    page.method === "GET" ? who.get(page.path(f)) : who.post(page.path(f), new URLSearchParams(), "/console/events");

  describe.each(CONSOLE_PAGES.map((p) => [`${p.method} ${p.path({ itemId: "{item}", eventId: "{event}", deliveryId: "{delivery}" } as Fixture)}`, p] as const))("%s", (_name, page) => {
    it("signed out: a GET is sent to sign in, a POST is refused (no CSRF token, no session)", async () => {
      const res = await fetch(t.url + page.path(f), { method: page.method, headers: { origin: t.url }, redirect: "manual" });
      if (page.method === "GET") {
        expect(res.status).toBe(303);
        expect(res.headers.get("location")).toMatch(/^\/console\/sign-in/);
      } else expect(res.status).toBe(403);
    });

    it.each(ROLES)("as %s: success when the role allows it, else 403", async (role) => {
      const res = await call(page, sessions[role]);
      expect(res.status).toBe(RANK[role] >= RANK[page.minRole] ? page.success : 403);
    });

    it(`another company's admin: ${page.ids ? "404" : "its own data"}`, async () => {
      const res = await call(page, otherAdmin);
      expect(res.status).toBe(page.ids ? 404 : page.success);
      // Nothing of the event shows: a 404 names only the id asked for, a list only the asking company's events.
      expect(res.text).not.toContain(page.ids ? f.itemId : f.eventId);
    });
  });
});
