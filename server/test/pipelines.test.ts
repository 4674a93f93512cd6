/**
 * Pipeline lookups (spec "Pipelines"; CONTRACT "Scopes and limits": any valid key, "Errors": 404) and the additive
 * GET /v1/ext/pipelines/{pipeline_id}/fields.
 */
import { CustomFieldSchema, PipelineSchema, StageSchema, StatusSchema } from "@stageline/shared";
import { createSalesPipeline, startTestServer, type TestPipeline, type TestServer } from "./helpers/test-server";

type Api = (method: string, path: string, body?: unknown) => ReturnType<TestServer["request"]>;

describe("pipelines, stages, statuses and fields", () => {
  let t: TestServer;
  let api: Api;
  let partners: TestPipeline;
  const useFreshKey = async () => {
    const { key } = await t.newKey();
    api = (method, path, body) => t.request(method, path, body, key);
  };

  beforeAll(async () => {
    t = await startTestServer();
    partners = await createSalesPipeline(t.server, t.companyId, "Partners");
  });
  afterAll(async () => {
    await t?.close();
  });

  describe("GET /pipelines", () => {
    beforeAll(useFreshKey);

    it("lists the company's pipelines newest first as { id, name, created_at }", async () => {
      const res = await api("GET", "/v1/ext/pipelines");
      expect(res.status).toBe(200);
      expect(res.body.map((p: { name: string }) => p.name)).toEqual(["Partners", "Sales"]);
      for (const pipeline of res.body) {
        expect(Object.keys(pipeline).sort()).toEqual(["created_at", "id", "name"]);
        expect(PipelineSchema.safeParse(pipeline).success).toBe(true);
      }
      expect(res.body[1].id).toBe(t.pipeline.id);
    });

    it("does not list another company's pipelines", async () => {
      const other = await t.newCompany("Other Pipelines Co");
      const res = await api("GET", "/v1/ext/pipelines");
      expect(res.body.map((p: { id: string }) => p.id)).not.toContain(other.pipeline.id);
      const theirs = await t.request("GET", "/v1/ext/pipelines", undefined, other.apiKey);
      expect(theirs.body.map((p: { id: string }) => p.id)).toEqual([other.pipeline.id]);
    });

    it("returns an empty array for a company without pipelines", async () => {
      const prisma = t.server.ctx.prisma;
      const other = await t.newCompany("Empty Co");
      await prisma.pipeline.deleteMany({ where: { companyId: other.companyId } });
      const res = await t.request("GET", "/v1/ext/pipelines", undefined, other.apiKey);
      expect(res.status).toBe(200);
      expect(res.body).toEqual([]);
    });
  });

  describe("GET /pipelines/{pipeline_id}/stages and .../statuses", () => {
    beforeAll(useFreshKey);

    it("lists a pipeline's stages in order as { id, name }", async () => {
      const res = await api("GET", `/v1/ext/pipelines/${t.pipeline.id}/stages`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(t.pipeline.stages.map((s) => ({ id: s.id, name: s.name })));
      expect(res.body.map((s: { name: string }) => s.name)).toEqual(["Lead", "Qualified", "Proposal", "Closed"]);
      expect(res.body.every((s: unknown) => StageSchema.safeParse(s).success)).toBe(true);
    });

    it("orders stages by their position, not by when they were added", async () => {
      const prisma = t.server.ctx.prisma;
      const pipeline = await prisma.pipeline.create({ data: { companyId: t.companyId, name: "Reordered", shortIdPrefix: "RE" } });
      await prisma.stage.create({ data: { pipelineId: pipeline.id, name: "Last", position: 2 } });
      await prisma.stage.create({ data: { pipelineId: pipeline.id, name: "First", position: 0 } });
      await prisma.stage.create({ data: { pipelineId: pipeline.id, name: "Middle", position: 1 } });
      const res = await api("GET", `/v1/ext/pipelines/${pipeline.id}/stages`);
      expect(res.body.map((s: { name: string }) => s.name)).toEqual(["First", "Middle", "Last"]);
    });

    it("lists the statuses a stage offers in order as { id, name }", async () => {
      const stage = t.pipeline.stages[2]!;
      const res = await api("GET", `/v1/ext/pipelines/${t.pipeline.id}/stages/${stage.id}/statuses`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(stage.statuses);
      expect(res.body.map((s: { name: string }) => s.name)).toEqual(["Open", "Won", "Lost"]);
      expect(res.body.every((s: unknown) => StatusSchema.safeParse(s).success)).toBe(true);
    });

    it("answers 404 for the stages of an unknown pipeline", async () => {
      const res = await api("GET", "/v1/ext/pipelines/no-such-pipeline/stages");
      expect(res.status).toBe(404);
      expect(res.body.code).toBe("not_found");
    });

    it("answers 404 for the stages of another company's pipeline", async () => {
      const other = await t.newCompany("Hidden Stages Co");
      const res = await api("GET", `/v1/ext/pipelines/${other.pipeline.id}/stages`);
      expect(res.status).toBe(404);
      expect(JSON.stringify(res.body)).not.toContain("Lead");
    });

    it("answers 404 for the statuses of a stage of another pipeline", async () => {
      const res = await api("GET", `/v1/ext/pipelines/${t.pipeline.id}/stages/${partners.stages[0]!.id}/statuses`);
      expect(res.status).toBe(404);
      expect(res.body.code).toBe("not_found");
    });

    it("answers 404 for the statuses of an unknown stage or another company's pipeline", async () => {
      const other = await t.newCompany("Hidden Statuses Co");
      const unknownStage = await api("GET", `/v1/ext/pipelines/${t.pipeline.id}/stages/no-such-stage/statuses`);
      expect(unknownStage.status).toBe(404);
      const foreign = await api("GET", `/v1/ext/pipelines/${other.pipeline.id}/stages/${other.pipeline.stages[0]!.id}/statuses`);
      expect(foreign.status).toBe(404);
    });
  });

  describe("GET /pipelines/{pipeline_id}/fields", () => {
    beforeAll(useFreshKey);

    it("lists the blueprint's custom fields in order with required always present", async () => {
      const res = await api("GET", `/v1/ext/pipelines/${t.pipeline.id}/fields`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual([
        { key: "email", label: "Email", type: "email", required: false },
        { key: "deal_value", label: "Deal value", type: "number", required: false },
      ]);
      expect(res.body.every((f: unknown) => CustomFieldSchema.safeParse(f).success)).toBe(true);
    });

    it("includes options for select fields and required: true for required fields", async () => {
      const prisma = t.server.ctx.prisma;
      const pipeline = await prisma.pipeline.create({
        data: {
          companyId: t.companyId,
          name: "Support",
          shortIdPrefix: "SUP",
          blueprint: {
            custom_fields: [
              { key: "severity", label: "Severity", type: "select", required: true, options: ["low", "medium", "high"] },
              { key: "reported_at", label: "Reported at", type: "datetime", required: false },
              { key: "vip", label: "VIP customer", type: "boolean" },
            ],
          },
        },
      });
      const res = await api("GET", `/v1/ext/pipelines/${pipeline.id}/fields`);
      expect(res.body).toEqual([
        { key: "severity", label: "Severity", type: "select", required: true, options: ["low", "medium", "high"] },
        { key: "reported_at", label: "Reported at", type: "datetime", required: false },
        { key: "vip", label: "VIP customer", type: "boolean", required: false },
      ]);
    });

    it("returns an empty array for a pipeline without custom fields", async () => {
      const prisma = t.server.ctx.prisma;
      const pipeline = await prisma.pipeline.create({ data: { companyId: t.companyId, name: "Bare", shortIdPrefix: "BARE" } });
      const res = await api("GET", `/v1/ext/pipelines/${pipeline.id}/fields`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual([]);
    });

    it("answers 404 for an unknown pipeline or another company's", async () => {
      const other = await t.newCompany("Hidden Fields Co");
      expect((await api("GET", "/v1/ext/pipelines/no-such-pipeline/fields")).status).toBe(404);
      const foreign = await api("GET", `/v1/ext/pipelines/${other.pipeline.id}/fields`);
      expect(foreign.status).toBe(404);
      expect(foreign.body.code).toBe("not_found");
    });
  });

  describe("access", () => {
    it("serves every lookup to any valid key, whatever its scopes", async () => {
      const { key } = await t.newKey(["tasks:read"]);
      const stage = t.pipeline.stages[0]!;
      for (const path of [
        "/v1/ext/pipelines",
        `/v1/ext/pipelines/${t.pipeline.id}/stages`,
        `/v1/ext/pipelines/${t.pipeline.id}/stages/${stage.id}/statuses`,
        `/v1/ext/pipelines/${t.pipeline.id}/fields`,
      ]) {
        const res = await t.request("GET", path, undefined, key);
        expect(res.status).toBe(200);
      }
    });

    it("still requires a valid key (401 without one)", async () => {
      const res = await t.request("GET", `/v1/ext/pipelines/${t.pipeline.id}/fields`, undefined, null);
      expect(res.status).toBe(401);
      expect(res.body.code).toBe("invalid_api_key");
    });
  });
});
