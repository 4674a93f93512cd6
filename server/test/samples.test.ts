import {
  BUILT_IN_ITEM_FIELDS,
  CUSTOM_FIELD_TYPES,
  ItemSchema,
  NoteSchema,
  TaskSchema,
  customFieldValueSchema,
  type CustomField,
  type CustomFieldType,
} from "@stageline/shared";
import { createApiKey } from "../src/services/api-keys";
import { startTestServer, type TestServer } from "./helpers/test-server";

/** One custom field of every type. */
const EVERY_TYPE: CustomField[] = CUSTOM_FIELD_TYPES.map((type) => ({
  key: `${type}_field`,
  label: `A ${type}`,
  type,
  ...(type === "select" ? { options: ["Gold", "Silver"] } : {}),
}));

/** What `typeof` says about a real value of each custom field type. */
const JS_TYPE: Record<CustomFieldType, string> = {
  text: "string",
  email: "string",
  number: "number",
  boolean: "boolean",
  date: "string",
  datetime: "string",
  url: "string",
  phone: "string",
  select: "string",
};

describe("sample payloads", () => {
  let t: TestServer;
  let company: Awaited<ReturnType<TestServer["newCompany"]>>;
  let pipelineId: string;
  beforeAll(async () => {
    t = await startTestServer();
    company = await t.newCompany("Sample Co");
    const prisma = t.server.ctx.prisma;
    // Newer than the company's Sales pipeline, so it is the one the sample follows.
    const pipeline = await prisma.pipeline.create({
      data: {
        companyId: company.companyId,
        name: "Everything",
        shortIdPrefix: "EVRY",
        blueprint: { custom_fields: EVERY_TYPE } as object,
        createdAt: new Date(Date.now() + 60_000),
      },
    });
    pipelineId = pipeline.id;
    // Inserted out of order: the sample must follow `position`, not insertion order.
    const later = await prisma.stage.create({ data: { pipelineId, name: "Later", position: 1 } });
    await prisma.status.create({ data: { stageId: later.id, name: "Waiting", position: 0 } });
    const first = await prisma.stage.create({ data: { pipelineId, name: "Intake", position: 0 } });
    await prisma.status.create({ data: { stageId: first.id, name: "Second", position: 1 } });
    await prisma.status.create({ data: { stageId: first.id, name: "Fresh", position: 0 } });
  });
  afterAll(async () => {
    await t?.close();
  });

  describe("items", () => {
    it("is one item in the Item format from the company's newest pipeline, its first stage and status", async () => {
      const res = await t.request("GET", "/v1/ext/webhooks/sample/items", undefined, company.apiKey);
      expect(res.status).toBe(200);
      expect(Array.isArray(res.body)).toBe(false);
      expect(ItemSchema.parse(res.body)).toEqual(res.body);
      expect(res.body).toMatchObject({
        short_id: "EVRY-1",
        pipeline: "Everything",
        pipeline_id: pipelineId,
        stage: "Intake",
        status: "Fresh",
        version: 1,
        source: "api",
        contact_id: "sample_contact",
      });
    });

    it("carries every custom field of the blueprint with a value of the field's type", async () => {
      const res = await t.request("GET", "/v1/ext/webhooks/sample/items", undefined, company.apiKey);
      for (const field of EVERY_TYPE) {
        expect(typeof res.body[field.key]).toBe(JS_TYPE[field.type]);
        expect(customFieldValueSchema(field).safeParse(res.body[field.key]).success).toBe(true);
      }
    });

    it("has the same keys as a real item of the pipeline", async () => {
      const res = await t.request("GET", "/v1/ext/webhooks/sample/items", undefined, company.apiKey);
      const expected = [
        ...BUILT_IN_ITEM_FIELDS.filter((k) => !["matched_on", "changed_fields", "previous"].includes(k)),
        ...EVERY_TYPE.map((f) => f.key),
      ];
      expect(Object.keys(res.body).sort()).toEqual([...expected].sort());
    });

    it("follows the test company's Sales blueprint: email and deal_value", async () => {
      const res = await t.request("GET", "/v1/ext/webhooks/sample/items", undefined, (await t.newKey(["items:read"])).key);
      expect(res.body).toMatchObject({ pipeline: "Sales", stage: "Lead", status: "Open", email: "jane.doe@example.com", deal_value: 1500 });
    });

    it("still returns the built-in fields when the company has no pipeline", async () => {
      const prisma = t.server.ctx.prisma;
      const bare = await prisma.company.create({ data: { name: "No Pipelines Co" } });
      const { key } = await createApiKey(prisma, { companyId: bare.id, name: "Bare key" });
      const res = await t.request("GET", "/v1/ext/webhooks/sample/items", undefined, key);
      expect(res.status).toBe(200);
      expect(ItemSchema.strict().parse(res.body)).toEqual(res.body);
    });
  });

  describe("tasks", () => {
    it("is one task in the Task format, created by the requesting key", async () => {
      const { key, id } = await t.newKey(["tasks:read"]);
      const res = await t.request("GET", "/v1/ext/webhooks/sample/tasks", undefined, key);
      expect(res.status).toBe(200);
      expect(TaskSchema.strict().parse(res.body)).toEqual(res.body);
      expect(res.body.created_by).toBe(id);
    });
  });

  describe("notes", () => {
    it("is one note in the Note format on the sample item, created by the requesting key (CONTRACT \"Notes\")", async () => {
      const { key, id } = await t.newKey(["items:read"]);
      const res = await t.request("GET", "/v1/ext/webhooks/sample/notes", undefined, key);
      expect(res.status).toBe(200);
      expect(NoteSchema.strict().parse(res.body)).toEqual(res.body);
      expect(res.body).toMatchObject({ note_id: "sample_note", item_id: "sample_item", created_by: id, version: 1 });
    });
  });

  describe("scopes and unknown resources", () => {
    let hooksOnly: string;
    let itemsOnly: string;
    let tasksOnly: string;
    beforeAll(async () => {
      hooksOnly = (await t.newKey(["hooks:manage"])).key;
      itemsOnly = (await t.newKey(["items:read"])).key;
      tasksOnly = (await t.newKey(["tasks:read"])).key;
    });

    it("opens every sample to hooks:manage", async () => {
      expect((await t.request("GET", "/v1/ext/webhooks/sample/items", undefined, hooksOnly)).status).toBe(200);
      expect((await t.request("GET", "/v1/ext/webhooks/sample/tasks", undefined, hooksOnly)).status).toBe(200);
      expect((await t.request("GET", "/v1/ext/webhooks/sample/notes", undefined, hooksOnly)).status).toBe(200);
    });

    it("opens the note sample to items:read (a note is part of an item's record) but not to tasks:read", async () => {
      expect((await t.request("GET", "/v1/ext/webhooks/sample/notes", undefined, itemsOnly)).status).toBe(200);
      const refused = await t.request("GET", "/v1/ext/webhooks/sample/notes", undefined, tasksOnly);
      expect(refused.status).toBe(403);
      expect(refused.body.detail).toContain("hooks:manage or items:read");
    });

    it("opens the item sample to items:read but not to tasks:read", async () => {
      expect((await t.request("GET", "/v1/ext/webhooks/sample/items", undefined, itemsOnly)).status).toBe(200);
      const refused = await t.request("GET", "/v1/ext/webhooks/sample/items", undefined, tasksOnly);
      expect(refused.status).toBe(403);
      expect(refused.body.detail).toContain("hooks:manage or items:read");
    });

    it("opens the task sample to tasks:read but not to items:read", async () => {
      expect((await t.request("GET", "/v1/ext/webhooks/sample/tasks", undefined, tasksOnly)).status).toBe(200);
      const refused = await t.request("GET", "/v1/ext/webhooks/sample/tasks", undefined, itemsOnly);
      expect(refused.status).toBe(403);
      expect(refused.body.detail).toContain("hooks:manage or tasks:read");
    });

    it("answers 404 for a resource without a sample", async () => {
      const res = await t.request("GET", "/v1/ext/webhooks/sample/pipelines", undefined, hooksOnly);
      expect(res.status).toBe(404);
      expect(res.body.code).toBe("not_found");
      expect(res.body.detail).toContain("items, tasks, notes");
    });
  });
});
