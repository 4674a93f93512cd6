import { TaskSchema } from "@stageline/shared";
import { startTestServer, type TestServer } from "./helpers/test-server";

const DUE = "2026-03-01T09:30:00.000Z";

function newTask(extra: Record<string, unknown> = {}) {
  return { title: "Call Ada", due_at: DUE, assigned_to: "user_1", ...extra };
}

/** Inserts an item of `companyId` directly (the items API is not what these tests are about). */
async function insertItem(t: TestServer, companyId: string, pipeline: TestServer["pipeline"]): Promise<string> {
  const stage = pipeline.stages[0]!;
  const item = await t.server.ctx.prisma.item.create({
    data: { companyId, pipelineId: pipeline.id, stageId: stage.id, statusId: stage.statuses[0]!.id, shortId: `SALES-${Date.now()}`, name: "Deal" },
  });
  return item.id;
}

describe("tasks", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t?.close();
  });

  describe("creating", () => {
    let key: { key: string; id: string };
    beforeAll(async () => {
      key = await t.newKey(["tasks:read", "tasks:write"]);
    });

    it("answers 201 with the full task and a Location that reads it back", async () => {
      const res = await t.request("POST", "/v1/ext/tasks", newTask({ description: "Discuss pricing", priority: "high" }), key.key);
      expect(res.status).toBe(201);
      expect(TaskSchema.parse(res.body)).toEqual(res.body);
      expect(res.headers.get("location")).toBe(`/v1/ext/tasks/${res.body.task_id}`);
      const again = await t.request("GET", res.headers.get("location")!, undefined, key.key);
      expect(again.status).toBe(200);
      expect(again.body).toEqual(res.body);
    });

    it("fills priority none, task_type to_do and null optional fields when they are left out", async () => {
      const res = await t.request("POST", "/v1/ext/tasks", newTask(), key.key);
      expect(res.body).toMatchObject({
        title: "Call Ada",
        due_at: DUE,
        assigned_to: "user_1",
        priority: "none",
        task_type: "to_do",
        is_completed: false,
        completed_at: null,
        description: null,
        notes: null,
        item_id: null,
        duration_minutes: null,
        reminder_minutes: null,
      });
    });

    it("returns every written field, including duration_minutes and reminder_minutes", async () => {
      const body = newTask({ description: "d", notes: "n", priority: "urgent", task_type: "meeting", duration_minutes: 45, reminder_minutes: 10 });
      const res = await t.request("POST", "/v1/ext/tasks", body, key.key);
      expect(res.body).toMatchObject({ description: "d", notes: "n", priority: "urgent", task_type: "meeting", duration_minutes: 45, reminder_minutes: 10 });
    });

    it("records the creating API key's id as created_by", async () => {
      const res = await t.request("POST", "/v1/ext/tasks", newTask(), key.key);
      expect(res.body.created_by).toBe(key.id);
    });

    it("sets completed_at when a task is created completed", async () => {
      const before = Date.now();
      const res = await t.request("POST", "/v1/ext/tasks", newTask({ is_completed: true }), key.key);
      expect(res.body.is_completed).toBe(true);
      expect(Date.parse(res.body.completed_at)).toBeGreaterThanOrEqual(before - 1000);
    });

    it("links an item of the same company", async () => {
      const itemId = await insertItem(t, t.companyId, t.pipeline);
      const res = await t.request("POST", "/v1/ext/tasks", newTask({ item_id: itemId }), key.key);
      expect(res.status).toBe(201);
      expect(res.body.item_id).toBe(itemId);
    });

    it("refuses another company's item as 422 invalid_reference", async () => {
      const other = await t.newCompany("Item Owner Co");
      const foreignItem = await insertItem(t, other.companyId, other.pipeline);
      const res = await t.request("POST", "/v1/ext/tasks", newTask({ item_id: foreignItem }), key.key);
      expect(res.status).toBe(422);
      expect(res.body.code).toBe("invalid_reference");
      expect(res.body.errors).toEqual([{ path: "item_id", message: expect.stringContaining(foreignItem) }]);
    });

    it("refuses an unknown item as 422 and stores nothing", async () => {
      const res = await t.request("POST", "/v1/ext/tasks", newTask({ title: "Never stored", item_id: "no-such-item" }), key.key);
      expect(res.status).toBe(422);
      expect(await t.server.ctx.prisma.task.count({ where: { title: "Never stored" } })).toBe(0);
    });

    it("lists every missing or malformed field in one 400", async () => {
      const res = await t.request("POST", "/v1/ext/tasks", { due_at: "tomorrow", priority: "asap" }, key.key);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("validation_failed");
      expect(res.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(["assigned_to", "due_at", "priority", "title"]);
    });
  });

  describe("updating", () => {
    let key: string;
    beforeAll(async () => {
      key = (await t.newKey(["tasks:read", "tasks:write"])).key;
    });
    const create = async (extra: Record<string, unknown> = {}) => (await t.request("POST", "/v1/ext/tasks", newTask(extra), key)).body;

    it("changes only the fields sent and answers 200 with the full task", async () => {
      const task = await create({ description: "keep me" });
      const res = await t.request("PATCH", `/v1/ext/tasks/${task.task_id}`, { title: "Call Ada again", priority: "low" }, key);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...task, title: "Call Ada again", priority: "low", updated_at: expect.any(String) });
      expect(Date.parse(res.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(task.updated_at));
    });

    it("sets completed_at when is_completed becomes true", async () => {
      const task = await create();
      const res = await t.request("PATCH", `/v1/ext/tasks/${task.task_id}`, { is_completed: true }, key);
      expect(res.body.is_completed).toBe(true);
      expect(res.body.completed_at).toEqual(expect.any(String));
    });

    it("keeps the original completed_at when an already completed task is completed again", async () => {
      const task = await create({ is_completed: true });
      const res = await t.request("PATCH", `/v1/ext/tasks/${task.task_id}`, { is_completed: true, notes: "done twice" }, key);
      expect(res.body.completed_at).toBe(task.completed_at);
      expect(res.body.notes).toBe("done twice");
    });

    it("clears completed_at when is_completed becomes false", async () => {
      const task = await create({ is_completed: true });
      const res = await t.request("PATCH", `/v1/ext/tasks/${task.task_id}`, { is_completed: false }, key);
      expect(res.body).toMatchObject({ is_completed: false, completed_at: null });
    });

    it("clears optional fields sent as null", async () => {
      const task = await create({ description: "d", notes: "n", duration_minutes: 30 });
      const res = await t.request("PATCH", `/v1/ext/tasks/${task.task_id}`, { description: null, notes: null, duration_minutes: null }, key);
      expect(res.body).toMatchObject({ description: null, notes: null, duration_minutes: null });
    });

    it("refuses to link another company's item as 422", async () => {
      const task = await create();
      const other = await t.newCompany("Patch Item Owner");
      const foreignItem = await insertItem(t, other.companyId, other.pipeline);
      const res = await t.request("PATCH", `/v1/ext/tasks/${task.task_id}`, { item_id: foreignItem }, key);
      expect(res.status).toBe(422);
      expect(res.body.code).toBe("invalid_reference");
    });

    it("rejects an empty update body as 400", async () => {
      const task = await create();
      const res = await t.request("PATCH", `/v1/ext/tasks/${task.task_id}`, {}, key);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("validation_failed");
    });
  });

  describe("tenant isolation and missing tasks", () => {
    let key: string;
    let otherKey: string;
    let foreignTaskId: string;
    beforeAll(async () => {
      key = (await t.newKey(["tasks:read", "tasks:write"])).key;
      const other = await t.newCompany("Isolated Co");
      otherKey = other.apiKey;
      foreignTaskId = (await t.request("POST", "/v1/ext/tasks", newTask(), otherKey)).body.task_id;
    });

    it("answers 404 for an unknown task id", async () => {
      const res = await t.request("GET", "/v1/ext/tasks/does-not-exist", undefined, key);
      expect(res.status).toBe(404);
      expect(res.body.code).toBe("not_found");
    });

    it("answers 404 when reading another company's task", async () => {
      const res = await t.request("GET", `/v1/ext/tasks/${foreignTaskId}`, undefined, key);
      expect(res.status).toBe(404);
    });

    it("answers 404 when updating another company's task and leaves it unchanged", async () => {
      const res = await t.request("PATCH", `/v1/ext/tasks/${foreignTaskId}`, { title: "Hijacked" }, key);
      expect(res.status).toBe(404);
      const own = await t.request("GET", `/v1/ext/tasks/${foreignTaskId}`, undefined, otherKey);
      expect(own.body.title).toBe("Call Ada");
    });
  });

  describe("scopes", () => {
    let itemsOnly: string;
    let readOnly: string;
    beforeAll(async () => {
      itemsOnly = (await t.newKey(["items:read"])).key;
      readOnly = (await t.newKey(["tasks:read"])).key;
    });

    it("refuses listing tasks without tasks:read as 403 naming the scope", async () => {
      const res = await t.request("GET", "/v1/ext/tasks", undefined, itemsOnly);
      expect(res.status).toBe(403);
      expect(res.body.code).toBe("insufficient_scope");
      expect(res.body.detail).toContain("tasks:read");
    });

    it("refuses reading one task without tasks:read as 403", async () => {
      const res = await t.request("GET", "/v1/ext/tasks/any", undefined, itemsOnly);
      expect(res.status).toBe(403);
    });

    it("refuses creating a task without tasks:write as 403", async () => {
      const res = await t.request("POST", "/v1/ext/tasks", newTask(), readOnly);
      expect(res.status).toBe(403);
      expect(res.body.detail).toContain("tasks:write");
    });

    it("refuses updating a task without tasks:write as 403", async () => {
      const res = await t.request("PATCH", "/v1/ext/tasks/any", { title: "x" }, itemsOnly);
      expect(res.status).toBe(403);
    });
  });
});
