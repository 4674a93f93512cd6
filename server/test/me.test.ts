import { MeSchema, SCOPES } from "@stageline/shared";
import { startTestServer, type TestServer } from "./helpers/test-server";

describe("GET /v1/ext/me", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t?.close();
  });

  it("names the company and the key making the request", async () => {
    const res = await t.request("GET", "/v1/ext/me");
    expect(res.status).toBe(200);
    expect(MeSchema.parse(res.body)).toEqual(res.body);
    expect(res.body).toEqual({
      company: { id: t.companyId, name: "Acme Test" },
      key: { id: t.keyId, name: "Test key", scopes: [...SCOPES], expires_at: null },
      credential: { type: "key", app: null },
    });
  });

  it("answers any valid key, whatever its scopes", async () => {
    const { key, id } = await t.newKey(["items:read"]);
    const res = await t.request("GET", "/v1/ext/me", undefined, key);
    expect(res.status).toBe(200);
    expect(res.body.key).toMatchObject({ id, scopes: ["items:read"] });
  });

  it("shows the key's expiry", async () => {
    const expiresAt = new Date(Date.now() + 86_400_000);
    const { key } = await t.newKey(["tasks:read"], { expiresAt });
    const res = await t.request("GET", "/v1/ext/me", undefined, key);
    expect(res.body.key.expires_at).toBe(expiresAt.toISOString());
  });

  it("returns the key id that tasks record as created_by", async () => {
    const { key } = await t.newKey(["tasks:write"]);
    const me = await t.request("GET", "/v1/ext/me", undefined, key);
    const task = await t.request("POST", "/v1/ext/tasks", { title: "Mine", due_at: "2026-03-01T09:00:00Z", assigned_to: "ada" }, key);
    expect(task.body.created_by).toBe(me.body.key.id);
  });

  it("answers 401 without a key", async () => {
    const res = await t.request("GET", "/v1/ext/me", undefined, null);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe("invalid_api_key");
  });
});
