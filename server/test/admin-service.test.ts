/**
 * The admin operations (companies, API keys, pipeline import) as the admin API and the CLI run them, checked
 * through their effect on the external API.
 */
import { SCOPES } from "@stageline/shared";
import * as admin from "../src/admin/admin-service";
import type { PrismaClient } from "../src/generated/prisma/client";
import { defaultShortIdPrefix } from "../src/services/pipeline-import";
import { startTestServer, type TestServer } from "./helpers/test-server";

let t: TestServer;
let prisma: PrismaClient;
beforeAll(async () => {
  t = await startTestServer();
  prisma = t.server.ctx.prisma;
});
afterAll(async () => {
  await t?.close();
});

const MISSING_ID = "01900000-0000-7000-8000-000000000000";

describe("companies", () => {
  it("creates a company and answers its id and name", async () => {
    const company = await admin.createCompany(prisma, { name: "Globex" });
    expect(company).toEqual({ id: expect.any(String), name: "Globex" });
    expect(await prisma.company.findUnique({ where: { id: company.id } })).toMatchObject({ name: "Globex", subscriptionActive: true });
  });

  it("refuses an empty company name, naming the field", async () => {
    await expect(admin.createCompany(prisma, { name: "" })).rejects.toMatchObject({
      code: "validation_failed",
      extras: { errors: [{ path: "name", message: expect.any(String) }] },
    });
  });

  it("an inactive subscription makes the company's keys get 402, an active one lets them in again", async () => {
    const company = await admin.createCompany(prisma, { name: "Lapsing" });
    const { key } = await admin.createKey(prisma, { company_id: company.id, name: "k" });
    expect(await admin.setSubscription(prisma, company.id, { active: false })).toEqual({ id: company.id, name: "Lapsing", subscription_active: false });
    expect((await t.request("GET", "/v1/ext/me", undefined, key)).status).toBe(402);
    await admin.setSubscription(prisma, company.id, { active: true });
    expect((await t.request("GET", "/v1/ext/me", undefined, key)).status).toBe(200);
  });

  it("answers 404 for the subscription of an unknown company", async () => {
    await expect(admin.setSubscription(prisma, MISSING_ID, { active: false })).rejects.toMatchObject({ code: "not_found" });
  });
});

describe("API keys", () => {
  it("gives a new key every scope when none are listed", async () => {
    const created = await admin.createKey(prisma, { company_id: t.companyId, name: "All" });
    expect([...created.scopes].sort()).toEqual([...SCOPES].sort());
  });

  it("gives a new key exactly the listed scopes", async () => {
    const created = await admin.createKey(prisma, { company_id: t.companyId, name: "Read", scopes: ["items:read", "tasks:read"] });
    expect(created.scopes).toEqual(["items:read", "tasks:read"]);
    const res = await t.request("POST", "/v1/ext/items", { name: "x", pipeline_id: t.pipeline.id, stage_id: t.pipeline.stages[0]!.id }, created.key);
    expect(res.status).toBe(403);
  });

  it("answers the key value once, and it authenticates as the key's company", async () => {
    const created = await admin.createKey(prisma, { company_id: t.companyId, name: "Zapier" });
    expect(Object.keys(created).sort()).toEqual(["created_at", "expires_at", "id", "key", "name", "prefix", "scopes"]);
    const me = await t.request("GET", "/v1/ext/me", undefined, created.key);
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ company: { id: t.companyId }, key: { name: "Zapier" } });
  });

  it("refuses an unknown scope, naming it and the valid ones", async () => {
    const attempt = admin.createKey(prisma, { company_id: t.companyId, name: "Bad", scopes: ["items:read", "items:delete"] });
    await expect(attempt).rejects.toMatchObject({
      code: "validation_failed",
      extras: { errors: [{ path: "scopes[1]", message: expect.stringContaining("items:delete") }] },
    });
  });

  it("refuses an expiry in the past", async () => {
    const attempt = admin.createKey(prisma, { company_id: t.companyId, name: "Old", expires_at: "2020-01-01T00:00:00Z" });
    await expect(attempt).rejects.toMatchObject({ code: "validation_failed", extras: { errors: [{ path: "expires_at" }] } });
  });

  it("stores a future expiry", async () => {
    const created = await admin.createKey(prisma, { company_id: t.companyId, name: "Temp", expires_at: "2099-01-01T00:00:00Z" });
    const listed = (await admin.listKeys(prisma, t.companyId)).find((k) => k.id === created.id);
    expect(listed?.expires_at).toBe("2099-01-01T00:00:00.000Z");
  });

  it("answers 404 when creating a key for an unknown company", async () => {
    await expect(admin.createKey(prisma, { company_id: MISSING_ID, name: "x" })).rejects.toMatchObject({ code: "not_found" });
  });

  it("lists a company's keys newest first with their prefix, never the key value", async () => {
    const company = await admin.createCompany(prisma, { name: "Listed" });
    const first = await admin.createKey(prisma, { company_id: company.id, name: "first" });
    await new Promise((resolve) => setTimeout(resolve, 5)); // distinct created_at, so the order does not rest on ids
    const second = await admin.createKey(prisma, { company_id: company.id, name: "second" });
    const keys = await admin.listKeys(prisma, company.id);
    expect(keys.map((k) => k.id)).toEqual([second.id, first.id]);
    expect(second.key.startsWith(keys[0]!.prefix)).toBe(true);
    expect(JSON.stringify(keys)).not.toContain(second.key);
    expect(Object.keys(keys[0]!).sort()).toEqual(["created_at", "expires_at", "id", "last_used_at", "name", "prefix", "revoked_at", "scopes"]);
  });

  it("answers 404 when listing the keys of an unknown company", async () => {
    await expect(admin.listKeys(prisma, MISSING_ID)).rejects.toMatchObject({ code: "not_found" });
  });

  it("renames a key; the new name shows on /me", async () => {
    const created = await admin.createKey(prisma, { company_id: t.companyId, name: "Before" });
    expect((await admin.renameKey(prisma, created.id, { name: "After" })).name).toBe("After");
    expect((await t.request("GET", "/v1/ext/me", undefined, created.key)).body.key.name).toBe("After");
  });

  it("refuses an empty new name and answers 404 for an unknown key", async () => {
    const created = await admin.createKey(prisma, { company_id: t.companyId, name: "Keep" });
    await expect(admin.renameKey(prisma, created.id, { name: "" })).rejects.toMatchObject({ code: "validation_failed" });
    await expect(admin.renameKey(prisma, MISSING_ID, { name: "x" })).rejects.toMatchObject({ code: "not_found" });
  });

  it("a revoked key gets 401 on /v1/ext/pipelines", async () => {
    const created = await admin.createKey(prisma, { company_id: t.companyId, name: "Doomed" });
    expect((await t.request("GET", "/v1/ext/pipelines", undefined, created.key)).status).toBe(200);
    const revoked = await admin.revokeKey(prisma, created.id);
    expect(revoked.revoked_at).not.toBeNull();
    const res = await t.request("GET", "/v1/ext/pipelines", undefined, created.key);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe("invalid_api_key");
  });

  it("revoking twice keeps the first revocation time", async () => {
    const created = await admin.createKey(prisma, { company_id: t.companyId, name: "Twice" });
    const first = await admin.revokeKey(prisma, created.id);
    const second = await admin.revokeKey(prisma, created.id);
    expect(second.revoked_at).toBe(first.revoked_at);
  });

  it("answers 404 when revoking an unknown key", async () => {
    await expect(admin.revokeKey(prisma, MISSING_ID)).rejects.toMatchObject({ code: "not_found" });
  });
});

describe("pipeline import", () => {
  const file = {
    name: "Key accounts",
    stages: [{ name: "Lead" }, { name: "Negotiation", statuses: ["Active", "Paused"] }, { name: "Closed" }],
    custom_fields: [
      { key: "email", label: "Email", type: "email" },
      { key: "tier", label: "Tier", type: "select", options: ["A", "B"] },
    ],
    duplicate_detection: { fields: ["email", "name"], match: "all" },
  };

  it("creates the stages in order, each with its statuses (Open, Won, Lost when none are listed)", async () => {
    const imported = await admin.importPipeline(prisma, t.companyId, file);
    expect(imported.name).toBe("Key accounts");
    expect(imported.stages.map((s) => [s.name, s.statuses.map((x) => x.name)])).toEqual([
      ["Lead", ["Open", "Won", "Lost"]],
      ["Negotiation", ["Active", "Paused"]],
      ["Closed", ["Open", "Won", "Lost"]],
    ]);
    const stages = await t.request("GET", `/v1/ext/pipelines/${imported.id}/stages`);
    expect(stages.body).toEqual(imported.stages.map(({ id, name }) => ({ id, name })));
    const statuses = await t.request("GET", `/v1/ext/pipelines/${imported.id}/stages/${imported.stages[1]!.id}/statuses`);
    expect(statuses.body).toEqual(imported.stages[1]!.statuses);
  });

  it("stores the custom fields and duplicate detection as the pipeline's blueprint", async () => {
    const imported = await admin.importPipeline(prisma, t.companyId, file);
    const stored = await prisma.pipeline.findUniqueOrThrow({ where: { id: imported.id } });
    expect(stored.blueprint).toEqual({ custom_fields: file.custom_fields, duplicate_detection: file.duplicate_detection });
  });

  it("numbers items with the name's letters when no prefix is given", async () => {
    const imported = await admin.importPipeline(prisma, t.companyId, file);
    expect(imported.short_id_prefix).toBe("KEYACCOUNT");
    const res = await t.request("POST", "/v1/ext/items", { name: "Initech", pipeline_id: imported.id, stage_id: imported.stages[0]!.id });
    expect(res.status).toBe(201);
    expect(res.body.short_id).toBe("KEYACCOUNT-1");
  });

  it("uses the short_id_prefix of the file", async () => {
    const imported = await admin.importPipeline(prisma, t.companyId, { ...file, short_id_prefix: "KA" });
    expect(imported.short_id_prefix).toBe("KA");
  });

  it("derives prefixes from letters only, without accents, at most 10", () => {
    expect(defaultShortIdPrefix("Sales")).toBe("SALES");
    expect(defaultShortIdPrefix("Équipe été 2026")).toBe("EQUIPEETE");
    expect(defaultShortIdPrefix("Enterprise renewals")).toBe("ENTERPRISE");
    expect(defaultShortIdPrefix("2026")).toBe("ITEM");
  });

  it("lists every failing field of an invalid file and writes nothing", async () => {
    const before = await prisma.pipeline.count();
    const attempt = admin.importPipeline(prisma, t.companyId, {
      name: "",
      stages: [{ name: "Lead", statuses: [] }],
      custom_fields: [{ key: "Email", label: "Email", type: "mail" }],
      colour: "red",
    });
    await expect(attempt).rejects.toMatchObject({ code: "validation_failed" });
    const paths = ((await attempt.catch((e) => e)).extras.errors as { path: string }[]).map((e) => e.path).sort();
    expect(paths).toEqual(["colour", "custom_fields[0].key", "custom_fields[0].type", "name", "stages[0].statuses"]);
    expect(await prisma.pipeline.count()).toBe(before);
  });

  it("refuses repeated stage names, built-in field keys and unknown duplicate-detection fields", async () => {
    const attempt = admin.importPipeline(prisma, t.companyId, {
      name: "Broken",
      stages: [{ name: "Lead" }, { name: "lead" }],
      custom_fields: [{ key: "source", label: "Source", type: "text" }],
      duplicate_detection: { fields: ["phone"], match: "any" },
    });
    const err = await attempt.catch((e) => e);
    expect(err.code).toBe("validation_failed");
    expect((err.extras.errors as { path: string }[]).map((e) => e.path).sort()).toEqual([
      "custom_fields[0].key",
      "duplicate_detection.fields[0]",
      "stages",
    ]);
  });

  it("answers 404 for an unknown company and writes nothing", async () => {
    const before = await prisma.pipeline.count();
    await expect(admin.importPipeline(prisma, MISSING_ID, file)).rejects.toMatchObject({ code: "not_found" });
    expect(await prisma.pipeline.count()).toBe(before);
  });
});
