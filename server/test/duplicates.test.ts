/**
 * POST /v1/ext/items/check-duplicates (CONTRACT "Duplicate check", "Pipelines, blueprints, transitions";
 * scope items:read per CONTRACT "Scopes and limits").
 */
import { DuplicateMatchSchema } from "@stageline/shared";
import { createSimplePipeline, type SimplePipeline } from "./helpers/simple-pipeline";
import { startTestServer, type TestServer } from "./helpers/test-server";

type Api = (method: string, path: string, body?: unknown) => ReturnType<TestServer["request"]>;

const createPipeline = createSimplePipeline;

describe("items: duplicate check", () => {
  let t: TestServer;
  let api: Api;
  const useFreshKey = async () => {
    const { key } = await t.newKey();
    api = (method, path, body) => t.request(method, path, body, key);
  };
  const check = (body: unknown) => api("POST", "/v1/ext/items/check-duplicates", body);
  const create = async (pipeline: SimplePipeline, body: Record<string, unknown>) => {
    const res = await api("POST", "/v1/ext/items", { pipeline_id: pipeline.id, stage_id: pipeline.stageId, ...body });
    expect(res.status).toBe(201);
    return res.body;
  };
  const names = (body: { name: string }[]) => body.map((m) => m.name);

  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('match "any" on email (the Sales pipeline)', () => {
    let sales: SimplePipeline;
    beforeAll(async () => {
      await useFreshKey();
      sales = { id: t.pipeline.id, stageId: t.pipeline.stages[0]!.id };
      await create(sales, { name: "Ada's deal", metadata: { email: "Ada@Example.com" } });
      await create(sales, { name: "Bob's deal", metadata: { email: "bob@example.com" } });
    });

    it("finds an item whose email matches, ignoring case", async () => {
      const res = await check({ pipeline_id: sales.id, name: "Anything", metadata: { email: "ada@example.com" } });
      expect(res.status).toBe(200);
      expect(names(res.body)).toEqual(["Ada's deal"]);
      expect(res.body[0].matched_on).toEqual(["email"]);
      expect(DuplicateMatchSchema.safeParse(res.body[0]).success).toBe(true);
    });

    it("normalizes the input email: surrounding spaces and capitals do not matter", async () => {
      const res = await check({ pipeline_id: sales.id, metadata: { email: "  ADA@example.COM " } });
      expect(res.status).toBe(200);
      expect(names(res.body)).toEqual(["Ada's deal"]);
    });

    it("returns each match as a full item plus matched_on", async () => {
      const res = await check({ pipeline_id: sales.id, metadata: { email: "BOB@EXAMPLE.COM" } });
      expect(res.body).toEqual([
        expect.objectContaining({
          name: "Bob's deal",
          short_id: expect.stringMatching(/^SALES-\d+$/),
          pipeline: "Sales",
          stage: "Lead",
          status: "Open",
          email: "bob@example.com",
          deal_value: null,
          version: 1,
          matched_on: ["email"],
        }),
      ]);
    });

    it("returns an empty array when nothing matches", async () => {
      const res = await check({ pipeline_id: sales.id, metadata: { email: "nobody@example.com" } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual([]);
    });

    it("returns an empty array when the input carries no configured field", async () => {
      const res = await check({ pipeline_id: sales.id, name: "Ada's deal", metadata: { deal_value: 3 } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual([]);
    });

    it("accepts a whole create body and creates nothing", async () => {
      const before = await t.server.ctx.prisma.item.count();
      const res = await check({
        name: "Ada again",
        pipeline_id: sales.id,
        stage_id: sales.stageId,
        contact_id: "c-1",
        source: "zapier",
        metadata: { email: "ada@example.com", deal_value: 10 },
      });
      expect(names(res.body)).toEqual(["Ada's deal"]);
      expect(await t.server.ctx.prisma.item.count()).toBe(before);
    });

    it("does not see another company's items", async () => {
      const other = await t.newCompany("Lookalike Co");
      await t.request(
        "POST",
        "/v1/ext/items",
        { name: "Their Ada", pipeline_id: other.pipeline.id, stage_id: other.pipeline.stages[0]!.id, metadata: { email: "ada@example.com" } },
        other.apiKey,
      );
      const res = await check({ pipeline_id: sales.id, metadata: { email: "ada@example.com" } });
      expect(names(res.body)).toEqual(["Ada's deal"]);
    });
  });

  describe("normalization of stored values", () => {
    beforeAll(useFreshKey);

    it("compares trimmed, case-insensitive text on both sides", async () => {
      const p = await createPipeline(t, "Vendors", "VEN", {
        custom_fields: [{ key: "company", label: "Company", type: "text" }],
        duplicate_detection: { fields: ["company"], match: "any" },
      });
      await create(p, { name: "Stored", metadata: { company: "  ACME Corp\t" } });
      const res = await check({ pipeline_id: p.id, metadata: { company: "acme corp  " } });
      expect(names(res.body)).toEqual(["Stored"]);
    });

    it("treats input values as data, never as SQL", async () => {
      const p = await createPipeline(t, "Suppliers", "SUP", {
        custom_fields: [{ key: "company", label: "Company", type: "text" }],
        duplicate_detection: { fields: ["company", "name"], match: "any" },
      });
      await create(p, { name: "O'Brien & Sons", metadata: { company: "x' OR '1'='1" } });
      await create(p, { name: "Unrelated", metadata: { company: "Other" } });
      const injected = await check({ pipeline_id: p.id, name: "'; DROP TABLE items; --", metadata: { company: "' OR '1'='1" } });
      expect(injected.status).toBe(200);
      expect(injected.body).toEqual([]);
      const quoted = await check({ pipeline_id: p.id, name: "o'brien & sons", metadata: { company: "X' or '1'='1" } });
      expect(quoted.body.map((m: { name: string; matched_on: string[] }) => [m.name, m.matched_on])).toEqual([
        ["O'Brien & Sons", ["company", "name"]],
      ]);
      expect(await t.server.ctx.prisma.item.count({ where: { pipelineId: p.id } })).toBe(2);
    });

    it("compares numbers as numbers", async () => {
      const p = await createPipeline(t, "Invoices", "INV", {
        custom_fields: [{ key: "invoice_no", label: "Invoice number", type: "number" }],
        duplicate_detection: { fields: ["invoice_no"], match: "any" },
      });
      await create(p, { name: "Invoice", metadata: { invoice_no: 1001 } });
      expect(names((await check({ pipeline_id: p.id, metadata: { invoice_no: 1001.0 } })).body)).toEqual(["Invoice"]);
      expect((await check({ pipeline_id: p.id, metadata: { invoice_no: 1002 } })).body).toEqual([]);
    });
  });

  describe("several fields", () => {
    let anyPipeline: SimplePipeline;
    let allPipeline: SimplePipeline;
    const blueprint = (match: "any" | "all") => ({
      custom_fields: [
        { key: "email", label: "Email", type: "email" },
        { key: "phone", label: "Phone", type: "phone" },
      ],
      duplicate_detection: { fields: ["email", "name", "contact_id"], match },
    });

    beforeAll(async () => {
      await useFreshKey();
      anyPipeline = await createPipeline(t, "Leads any", "ANY", blueprint("any"));
      allPipeline = await createPipeline(t, "Leads all", "ALL", blueprint("all"));
      for (const p of [anyPipeline, allPipeline]) {
        await create(p, { name: "Grace Hopper", contact_id: "c-42", metadata: { email: "grace@example.com" } });
        await create(p, { name: "Someone else", metadata: { email: "grace@example.com" } });
        await create(p, { name: "grace hopper", metadata: { email: "other@example.com" } });
      }
    });

    it('"any": matches items that share any configured field, best match first, then newest', async () => {
      const res = await check({ pipeline_id: anyPipeline.id, name: "GRACE HOPPER", contact_id: "c-42", metadata: { email: "grace@example.com" } });
      expect(res.body.map((m: { name: string; matched_on: string[] }) => [m.name, m.matched_on])).toEqual([
        ["Grace Hopper", ["email", "name", "contact_id"]],
        ["grace hopper", ["name"]],
        ["Someone else", ["email"]],
      ]);
    });

    it('"any": compares only the fields the input carries', async () => {
      const res = await check({ pipeline_id: anyPipeline.id, contact_id: "c-42" });
      expect(res.body.map((m: { name: string; matched_on: string[] }) => [m.name, m.matched_on])).toEqual([["Grace Hopper", ["contact_id"]]]);
    });

    it('"all": matches only items equal on every configured field', async () => {
      const res = await check({ pipeline_id: allPipeline.id, name: " grace hopper", contact_id: "C-42", metadata: { email: "Grace@example.com" } });
      expect(res.body.map((m: { name: string; matched_on: string[] }) => [m.name, m.matched_on])).toEqual([
        ["Grace Hopper", ["email", "name", "contact_id"]],
      ]);
    });

    it('"all": returns an empty array when the input lacks one of the configured fields', async () => {
      const res = await check({ pipeline_id: allPipeline.id, name: "Grace Hopper", metadata: { email: "grace@example.com" } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual([]);
    });

    it("returns an empty array for a pipeline without duplicate detection", async () => {
      const plain = await createPipeline(t, "Plain", "PLN", { custom_fields: [{ key: "email", label: "Email", type: "email" }] });
      await create(plain, { name: "X", metadata: { email: "x@example.com" } });
      const res = await check({ pipeline_id: plain.id, name: "X", metadata: { email: "x@example.com" } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual([]);
    });
  });

  describe("errors and scope", () => {
    beforeAll(useFreshKey);

    it("answers 422 for an unknown pipeline", async () => {
      const res = await check({ pipeline_id: "no-such-pipeline", metadata: { email: "a@example.com" } });
      expect(res.status).toBe(422);
      expect(res.body.code).toBe("invalid_reference");
      expect(res.body.errors[0].path).toBe("pipeline_id");
    });

    it("answers 422 for another company's pipeline", async () => {
      const other = await t.newCompany("Private Pipeline Co");
      const res = await check({ pipeline_id: other.pipeline.id, metadata: { email: "a@example.com" } });
      expect(res.status).toBe(422);
      expect(res.body.errors[0].path).toBe("pipeline_id");
    });

    it("answers 422 for an unknown custom field or a value of the wrong type", async () => {
      const res = await check({ pipeline_id: t.pipeline.id, metadata: { emial: "a@example.com", deal_value: "abc" } });
      expect(res.status).toBe(422);
      expect(res.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(["metadata.deal_value", "metadata.emial"]);
    });

    it("answers 400 without pipeline_id", async () => {
      const res = await check({ metadata: { email: "a@example.com" } });
      expect(res.status).toBe(400);
      expect(res.body.errors[0].path).toBe("pipeline_id");
    });

    it("works with a read-only key", async () => {
      const { key } = await t.newKey(["items:read"]);
      const res = await t.request("POST", "/v1/ext/items/check-duplicates", { pipeline_id: t.pipeline.id, metadata: { email: "a@example.com" } }, key);
      expect(res.status).toBe(200);
    });

    it("refuses a key lacking items:read with 403", async () => {
      const { key } = await t.newKey(["items:write"]);
      const res = await t.request("POST", "/v1/ext/items/check-duplicates", { pipeline_id: t.pipeline.id }, key);
      expect(res.status).toBe(403);
      expect(res.body.code).toBe("insufficient_scope");
      expect(res.body.detail).toContain("items:read");
    });
  });
});
