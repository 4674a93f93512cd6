/**
 * POST /v1/ext/items and GET /v1/ext/items/{item_id} (spec "Items"; CONTRACT "Responses", "Errors",
 * "Pipelines, blueprints, transitions", "Events and deliveries").
 */
import { ItemSchema } from "@stageline/shared";
import { startTestServer, type TestServer } from "./helpers/test-server";

type Api = (method: string, path: string, body?: unknown) => ReturnType<TestServer["request"]>;

describe("items: create and read", () => {
  let t: TestServer;
  let api: Api;
  /** A fresh key per group of tests, so no key passes the 60-requests-per-minute limit. */
  const useFreshKey = async () => {
    const { key } = await t.newKey();
    api = (method, path, body) => t.request(method, path, body, key);
  };
  const sales = () => t.pipeline;
  const stage = (i: number) => t.pipeline.stages[i]!;
  const createBody = (extra: Record<string, unknown> = {}) => ({
    name: "Acme renewal",
    pipeline_id: sales().id,
    stage_id: stage(0).id,
    ...extra,
  });

  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t?.close();
  });

  describe("a valid create", () => {
    beforeAll(useFreshKey);

    it("answers 201 with the full item, a Location header, short_id SALES-1, version 1, the first status and source api", async () => {
      const res = await api("POST", "/v1/ext/items", createBody({ metadata: { email: "ada@example.com" } }));
      expect(res.status).toBe(201);
      expect(res.headers.get("location")).toBe(`/v1/ext/items/${res.body.item_id}`);
      expect(ItemSchema.safeParse(res.body).success).toBe(true);
      expect(res.body).toEqual({
        item_id: expect.any(String),
        short_id: "SALES-1",
        name: "Acme renewal",
        pipeline: "Sales",
        pipeline_id: sales().id,
        stage: "Lead",
        stage_id: stage(0).id,
        status: "Open",
        status_id: stage(0).statuses[0]!.id,
        contact_id: null,
        source: "api",
        email: "ada@example.com",
        deal_value: null,
        created_at: expect.any(String),
        updated_at: expect.any(String),
        version: 1,
      });
    });

    it("numbers the next item of the pipeline SALES-2", async () => {
      const res = await api("POST", "/v1/ext/items", createBody({ name: "Second" }));
      expect(res.status).toBe(201);
      expect(res.body.short_id).toBe("SALES-2");
    });

    it("gives concurrent creates distinct short_ids", async () => {
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) => api("POST", "/v1/ext/items", createBody({ name: `Parallel ${i}` }))),
      );
      expect(results.map((r) => r.status)).toEqual(Array(6).fill(201));
      const ids = results.map((r) => r.body.short_id as string);
      expect(new Set(ids).size).toBe(6);
      expect([...ids].sort()).toEqual(["SALES-3", "SALES-4", "SALES-5", "SALES-6", "SALES-7", "SALES-8"].sort());
    });

    it("takes status_id, contact_id, source and custom values from the body", async () => {
      const res = await api(
        "POST",
        "/v1/ext/items",
        createBody({
          stage_id: stage(2).id,
          status_id: stage(2).statuses[1]!.id,
          contact_id: "contact-7",
          source: "zapier",
          metadata: { email: "bob@example.com", deal_value: 1500 },
        }),
      );
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        stage: "Proposal",
        status: "Won",
        contact_id: "contact-7",
        source: "zapier",
        email: "bob@example.com",
        deal_value: 1500,
      });
    });

    it("returns the created item from GET /items/{item_id} exactly as created", async () => {
      const created = await api("POST", "/v1/ext/items", createBody({ metadata: { deal_value: 99.5 } }));
      const fetched = await api("GET", created.headers.get("location")!);
      expect(fetched.status).toBe(200);
      expect(fetched.body).toEqual(created.body);
    });

    it("writes an item.created event whose payload equals the response", async () => {
      const created = await api("POST", "/v1/ext/items", createBody({ name: "Evented", metadata: { email: "ev@example.com" } }));
      const events = await t.server.ctx.prisma.webhookEvent.findMany({ where: { resourceId: created.body.item_id } });
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ type: "item.created", companyId: t.companyId, payload: created.body });
      expect(Object.keys(events[0]!.payload as object)).toEqual(Object.keys(created.body));
    });
  });

  describe("a body that fails its schema", () => {
    beforeAll(useFreshKey);

    it("answers 400 validation_failed listing every failing field", async () => {
      const res = await api("POST", "/v1/ext/items", { name: "", pipeline_id: 42, metadata: "nope" });
      expect(res.status).toBe(400);
      expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(res.body.code).toBe("validation_failed");
      const paths = res.body.errors.map((e: { path: string }) => e.path).sort();
      expect(paths).toEqual(["metadata", "name", "pipeline_id", "stage_id"]);
    });

    it("answers 400 for an unknown top-level field", async () => {
      const res = await api("POST", "/v1/ext/items", createBody({ colour: "red" }));
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("validation_failed");
      expect(JSON.stringify(res.body.errors)).toContain("colour");
    });

    it("answers 400 for malformed JSON", async () => {
      const res = await api("POST", "/v1/ext/items", "{not json");
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("validation_failed");
    });
  });

  describe("references that do not resolve", () => {
    beforeAll(useFreshKey);

    const expect422 = (res: Awaited<ReturnType<Api>>, paths: string[]) => {
      expect(res.status).toBe(422);
      expect(res.body.code).toBe("invalid_reference");
      expect(res.body.errors.map((e: { path: string }) => e.path)).toEqual(paths);
    };

    it("rejects an unknown pipeline with 422 naming pipeline_id", async () => {
      expect422(await api("POST", "/v1/ext/items", createBody({ pipeline_id: "no-such-pipeline" })), ["pipeline_id"]);
    });

    it("rejects another company's pipeline with 422", async () => {
      const other = await t.newCompany("Pipeline Owner Co");
      expect422(
        await api("POST", "/v1/ext/items", createBody({ pipeline_id: other.pipeline.id, stage_id: other.pipeline.stages[0]!.id })),
        ["pipeline_id"],
      );
    });

    it("rejects a stage of another pipeline with 422 naming stage_id", async () => {
      const other = await t.newCompany("Stage Owner Co");
      expect422(await api("POST", "/v1/ext/items", createBody({ stage_id: other.pipeline.stages[1]!.id })), ["stage_id"]);
    });

    it("rejects a status the stage does not offer with 422 naming status_id", async () => {
      expect422(await api("POST", "/v1/ext/items", createBody({ status_id: stage(1).statuses[0]!.id })), ["status_id"]);
    });

    it("rejects an unknown custom field with 422 naming it", async () => {
      const res = await api("POST", "/v1/ext/items", createBody({ metadata: { colour: "red" } }));
      expect422(res, ["metadata.colour"]);
      expect(res.body.detail).toMatch(/email, deal_value/);
    });

    it("rejects a custom value of the wrong type with 422 (deal_value \"abc\")", async () => {
      expect422(await api("POST", "/v1/ext/items", createBody({ metadata: { deal_value: "abc" } })), ["metadata.deal_value"]);
    });

    it("rejects a pipeline's required custom field when it is missing", async () => {
      const prisma = t.server.ctx.prisma;
      const pipeline = await prisma.pipeline.create({
        data: {
          companyId: t.companyId,
          name: "Hiring",
          shortIdPrefix: "HIRE",
          blueprint: { custom_fields: [{ key: "role", label: "Role", type: "text", required: true }] },
          stages: { create: [{ name: "Applied", position: 0, statuses: { create: [{ name: "New", position: 0 }] } }] },
        },
        include: { stages: true },
      });
      const body = { name: "Candidate", pipeline_id: pipeline.id, stage_id: pipeline.stages[0]!.id };
      expect422(await api("POST", "/v1/ext/items", body), ["metadata.role"]);
      const ok = await api("POST", "/v1/ext/items", { ...body, metadata: { role: "Engineer" } });
      expect(ok.status).toBe(201);
      expect(ok.body).toMatchObject({ short_id: "HIRE-1", role: "Engineer" });
    });

    it("lists every failing reference in one response", async () => {
      expect422(
        await api("POST", "/v1/ext/items", createBody({ status_id: "nope", metadata: { deal_value: "abc", colour: 1 } })),
        ["status_id", "metadata.deal_value", "metadata.colour"],
      );
    });

    it("leaves nothing behind: no item, no event, no short_id used up", async () => {
      const prisma = t.server.ctx.prisma;
      const before = { items: await prisma.item.count(), events: await prisma.webhookEvent.count() };
      const lastShortIdNumber = async () =>
        (
          await prisma.$queryRawUnsafe<{ n: number | null }[]>(
            `SELECT pg_sequence_last_value(pipeline_short_id_sequence($1)::regclass)::int AS n`,
            sales().id,
          )
        )[0]!.n;
      const counter = await lastShortIdNumber();
      expect((await api("POST", "/v1/ext/items", createBody({ metadata: { deal_value: "abc" } }))).status).toBe(422);
      expect({ items: await prisma.item.count(), events: await prisma.webhookEvent.count() }).toEqual(before);
      expect(await lastShortIdNumber()).toBe(counter);
    });
  });

  describe("scopes and tenants", () => {
    beforeAll(useFreshKey);

    it("refuses a create with a key lacking items:write (403 naming the scope)", async () => {
      const { key } = await t.newKey(["items:read"]);
      const res = await t.request("POST", "/v1/ext/items", createBody(), key);
      expect(res.status).toBe(403);
      expect(res.body.code).toBe("insufficient_scope");
      expect(res.body.detail).toContain("items:write");
    });

    it("refuses a read with a key lacking items:read", async () => {
      const created = await api("POST", "/v1/ext/items", createBody());
      const { key } = await t.newKey(["tasks:read"]);
      const res = await t.request("GET", `/v1/ext/items/${created.body.item_id}`, undefined, key);
      expect(res.status).toBe(403);
      expect(res.body.detail).toContain("items:read");
    });

    it("answers 404 for an unknown item id", async () => {
      const res = await api("GET", "/v1/ext/items/no-such-item");
      expect(res.status).toBe(404);
      expect(res.body.code).toBe("not_found");
    });

    it("answers 404 for another company's item, as if it did not exist", async () => {
      const other = await t.newCompany("Neighbour Co");
      const theirs = await t.request(
        "POST",
        "/v1/ext/items",
        { name: "Their item", pipeline_id: other.pipeline.id, stage_id: other.pipeline.stages[0]!.id },
        other.apiKey,
      );
      expect(theirs.status).toBe(201);
      const res = await api("GET", `/v1/ext/items/${theirs.body.item_id}`);
      expect(res.status).toBe(404);
      expect(res.body.code).toBe("not_found");
      expect(JSON.stringify(res.body)).not.toContain("Their item");
    });

    it("numbers each pipeline on its own counter", async () => {
      const other = await t.newCompany("Counter Co");
      const res = await t.request(
        "POST",
        "/v1/ext/items",
        { name: "First elsewhere", pipeline_id: other.pipeline.id, stage_id: other.pipeline.stages[0]!.id },
        other.apiKey,
      );
      expect(res.body.short_id).toBe("SALES-1");
    });
  });
});
