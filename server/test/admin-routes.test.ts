/**
 * The admin HTTP API under /admin (what the CLI uses while the server runs on the embedded database): guarded by
 * the x-admin-token header, problem+json errors like the external API, bodies in the shared admin schemas.
 */
import {
  CompanyCreatedSchema,
  KeyCreatedSchema,
  KeySummarySchema,
  PROBLEM_CONTENT_TYPE,
  ProblemSchema,
} from "@stageline/shared";
import { ImportedPipelineSchema } from "../src/admin/admin-api";
import { startTestServer, type TestServer } from "./helpers/test-server";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t?.close();
});

/** A request to the admin API; `token` null sends no token. */
async function adminRequest(method: string, path: string, body?: unknown, token: string | null = t.server.ctx.adminToken) {
  const headers: Record<string, string> = {};
  if (token !== null) headers["x-admin-token"] = token;
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`${t.url}/admin${path}`, { method, headers, body: typeof body === "string" ? body : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, contentType: res.headers.get("content-type") ?? "", body: text ? JSON.parse(text) : undefined };
}

describe("admin token", () => {
  it("answers 401 problem+json without a token", async () => {
    const res = await adminRequest("POST", "/companies", { name: "Nope" }, null);
    expect(res.status).toBe(401);
    expect(res.contentType).toContain(PROBLEM_CONTENT_TYPE);
    expect(ProblemSchema.parse(res.body)).toMatchObject({ status: 401, detail: expect.stringContaining("x-admin-token") });
  });

  it("answers 401 with a wrong token and creates nothing", async () => {
    const before = await t.server.ctx.prisma.company.count();
    const res = await adminRequest("POST", "/companies", { name: "Nope" }, "not-the-token");
    expect(res.status).toBe(401);
    expect(ProblemSchema.parse(res.body).status).toBe(401);
    expect(await t.server.ctx.prisma.company.count()).toBe(before);
  });

  it("does not accept an API key in place of the admin token", async () => {
    const res = await adminRequest("GET", `/companies/${t.companyId}/keys`, undefined, t.apiKey);
    expect(res.status).toBe(401);
  });
});

describe("admin operations over HTTP", () => {
  it("creates a company: 201 with { id, name }", async () => {
    const res = await adminRequest("POST", "/companies", { name: "Initech" });
    expect(res.status).toBe(201);
    expect(CompanyCreatedSchema.strict().parse(res.body).name).toBe("Initech");
  });

  it("creates a key that authenticates on the external API", async () => {
    const res = await adminRequest("POST", "/keys", { company_id: t.companyId, name: "Via HTTP", scopes: ["items:read"] });
    expect(res.status).toBe(201);
    const created = KeyCreatedSchema.strict().parse(res.body);
    expect(created.scopes).toEqual(["items:read"]);
    const me = await t.request("GET", "/v1/ext/me", undefined, created.key);
    expect(me.body.key).toMatchObject({ name: "Via HTTP", scopes: ["items:read"] });
  });

  it("lists, renames and revokes keys; a revoked key gets 401", async () => {
    const created = KeyCreatedSchema.parse((await adminRequest("POST", "/keys", { company_id: t.companyId, name: "Temp" })).body);
    const list = await adminRequest("GET", `/companies/${t.companyId}/keys`);
    expect(list.status).toBe(200);
    expect(KeySummarySchema.array().parse(list.body).map((k) => k.id)).toContain(created.id);
    const renamed = await adminRequest("PATCH", `/keys/${created.id}`, { name: "Renamed" });
    expect(KeySummarySchema.parse(renamed.body).name).toBe("Renamed");
    const revoked = await adminRequest("POST", `/keys/${created.id}/revoke`);
    expect(KeySummarySchema.parse(revoked.body).revoked_at).not.toBeNull();
    expect((await t.request("GET", "/v1/ext/pipelines", undefined, created.key)).status).toBe(401);
  });

  it("switches a company's subscription", async () => {
    const other = await t.newCompany("Switched Co");
    const res = await adminRequest("PUT", `/companies/${other.companyId}/subscription`, { active: false });
    expect(res.body).toEqual({ id: other.companyId, name: "Switched Co", subscription_active: false });
    expect((await t.request("GET", "/v1/ext/me", undefined, other.apiKey)).status).toBe(402);
  });

  it("imports a pipeline: 201 with its stages and statuses", async () => {
    const res = await adminRequest("POST", `/companies/${t.companyId}/pipelines`, { name: "Support", stages: [{ name: "New" }, { name: "Done", statuses: ["Solved"] }] });
    expect(res.status).toBe(201);
    const pipeline = ImportedPipelineSchema.parse(res.body);
    expect(pipeline.short_id_prefix).toBe("SUPPORT");
    expect(pipeline.stages.map((s) => s.statuses.map((x) => x.name))).toEqual([["Open", "Won", "Lost"], ["Solved"]]);
  });
});

describe("admin errors", () => {
  it("answers 400 listing every failing field of a body", async () => {
    const res = await adminRequest("POST", "/keys", { company_id: t.companyId, name: "", scopes: ["items:read", "everything"], extra: 1 });
    expect(res.status).toBe(400);
    const problem = ProblemSchema.parse(res.body);
    expect(problem.code).toBe("validation_failed");
    expect(problem.errors!.map((e) => e.path).sort()).toEqual(["extra", "name", "scopes[1]"]);
  });

  it("answers 400 for malformed JSON", async () => {
    const res = await adminRequest("POST", "/companies", "{not json");
    expect(res.status).toBe(400);
    expect(ProblemSchema.parse(res.body).code).toBe("validation_failed");
  });

  it("answers 404 for an unknown company or key", async () => {
    const missing = "01900000-0000-7000-8000-000000000000";
    for (const [method, path, body] of [
      ["GET", `/companies/${missing}/keys`, undefined],
      ["PUT", `/companies/${missing}/subscription`, { active: true }],
      ["POST", `/companies/${missing}/pipelines`, { name: "X", stages: [{ name: "A" }] }],
      ["PATCH", `/keys/${missing}`, { name: "X" }],
      ["POST", `/keys/${missing}/revoke`, undefined],
    ] as const) {
      const res = await adminRequest(method, path, body);
      expect({ path, status: res.status, code: res.body.code }).toEqual({ path, status: 404, code: "not_found" });
    }
  });
});
