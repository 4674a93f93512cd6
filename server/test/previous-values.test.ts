/**
 * CONTRACT "Previous values in update events": `item.updated` / `item.stage_changed` and `task.updated` /
 * `task.completed` carry `changed_fields` (every changed field) and `previous` (each one's value before the change),
 * read here from the outbox rows the update wrote.
 */
import { ItemChangedEventSchema, TASK_CHANGE_FIELDS, TaskChangedEventSchema } from "@stageline/shared";
import { startTestServer, type TestServer } from "./helpers/test-server";

describe("previous values in update events", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t?.close();
  });

  // A fresh key per test: each stays far below the per-key rate limit.
  let key: string;
  beforeEach(async () => {
    key = (await t.newKey()).key;
  });
  const stage = (i: number) => t.pipeline.stages[i]!;
  const eventsOf = async (resourceId: string) =>
    (await t.server.ctx.prisma.webhookEvent.findMany({ where: { resourceId }, orderBy: { seq: "asc" } })).map((e) => ({
      type: e.type,
      payload: e.payload as Record<string, any>,
    }));
  const newItem = async (extra: Record<string, unknown> = {}) => {
    const res = await t.request("POST", "/v1/ext/items", { name: "Acme", pipeline_id: t.pipeline.id, stage_id: stage(0).id, ...extra }, key);
    expect(res.status).toBe(201);
    return res.body;
  };
  const newTask = async (extra: Record<string, unknown> = {}) => {
    const res = await t.request("POST", "/v1/ext/tasks", { title: "Call", due_at: "2026-03-01T09:30:00Z", assigned_to: "ada", ...extra }, key);
    expect(res.status).toBe(201);
    return res.body;
  };

  describe("items", () => {
    it("lists every changed field, built-in and custom, with its value before the change", async () => {
      const item = await newItem({ contact_id: "c-1", source: "web", metadata: { email: "ada@acme.example", deal_value: 100 } });
      const res = await t.request("PATCH", `/v1/ext/items/${item.item_id}`, {
        name: "Acme renewal",
        stage_id: stage(2).id,
        status_id: stage(2).statuses[2]!.id,
        contact_id: "c-2",
        source: "import",
        metadata: { email: null, deal_value: 250 },
      }, key);
      expect(res.status).toBe(200);
      const events = await eventsOf(item.item_id);
      expect(events.map((e) => e.type)).toEqual(["item.created", "item.updated", "item.stage_changed"]);
      const expected = {
        ...res.body,
        changed_fields: ["name", "stage", "status", "contact_id", "source", "email", "deal_value"],
        previous: { stage: "Lead", status: "Open", name: "Acme", contact_id: "c-1", source: "web", email: "ada@acme.example", deal_value: 100 },
      };
      expect(events[1]!.payload).toEqual(expected);
      expect(events[2]!.payload).toEqual(expected);
      expect(ItemChangedEventSchema.safeParse(events[1]!.payload).success).toBe(true);
    });

    it("gives null as the previous value of a custom field that was unset, and of a cleared contact", async () => {
      const item = await newItem({ contact_id: "c-9" });
      await t.request("PATCH", `/v1/ext/items/${item.item_id}`, { contact_id: null, metadata: { email: "new@acme.example" } }, key);
      const [, updated] = await eventsOf(item.item_id);
      expect(updated!.payload.changed_fields).toEqual(["contact_id", "email"]);
      expect(updated!.payload.previous).toEqual({ stage: "Lead", status: "Open", contact_id: "c-9", email: null });
      expect(updated!.payload.contact_id).toBeNull();
    });

    it("keeps stage and status in previous when neither changed (as before), with only the changed others", async () => {
      const item = await newItem();
      await t.request("PATCH", `/v1/ext/items/${item.item_id}`, { source: "crm" }, key);
      const [, updated] = await eventsOf(item.item_id);
      expect(updated!.payload.changed_fields).toEqual(["source"]);
      expect(updated!.payload.previous).toEqual({ stage: "Lead", status: "Open", source: "api" });
    });

    it("writes nothing for a PATCH that changes nothing", async () => {
      const item = await newItem({ metadata: { deal_value: 5 } });
      const res = await t.request("PATCH", `/v1/ext/items/${item.item_id}`, { name: "Acme", stage_id: stage(0).id, metadata: { deal_value: 5 } }, key);
      expect(res.status).toBe(200);
      expect(res.body.version).toBe(1);
      expect((await eventsOf(item.item_id)).map((e) => e.type)).toEqual(["item.created"]);
    });

    it("chains concurrent updates: each event's previous is exactly the state the one before it left", async () => {
      const item = await newItem({ metadata: { deal_value: 0 } });
      const values = Array.from({ length: 8 }, (_, i) => i + 1);
      const results = await Promise.all(
        values.map((v) => t.request("PATCH", `/v1/ext/items/${item.item_id}`, { name: `Writer ${v}`, metadata: { deal_value: v } }, key)),
      );
      expect(results.every((r) => r.status === 200)).toBe(true);
      const updates = (await eventsOf(item.item_id)).filter((e) => e.type === "item.updated").map((e) => e.payload);
      expect(updates).toHaveLength(values.length);
      let before = { name: "Acme", deal_value: 0, version: 1 };
      for (const payload of updates) {
        expect(payload.version).toBe(before.version + 1);
        expect(payload.previous).toEqual({ stage: "Lead", status: "Open", name: before.name, deal_value: before.deal_value });
        before = { name: payload.name, deal_value: payload.deal_value, version: payload.version };
      }
    });

    it("adds at most one copy of the changed values to the body", async () => {
      const long = "x".repeat(200);
      const item = await newItem({ name: long });
      await t.request("PATCH", `/v1/ext/items/${item.item_id}`, { name: "y".repeat(200) }, key);
      const [created, updated] = await eventsOf(item.item_id);
      const extra = JSON.stringify(updated!.payload).length - JSON.stringify(created!.payload).length;
      // previous.name (200 characters) plus keys, the stage and status names and changed_fields: well under two copies.
      expect(extra).toBeGreaterThan(200);
      expect(extra).toBeLessThan(400);
    });
  });

  describe("tasks", () => {
    it("lists every changed task field with its Task-format value before the change", async () => {
      const item = await newItem();
      const task = await newTask({ description: "d", notes: "n", priority: "low", task_type: "call", duration_minutes: 10, reminder_minutes: 5 });
      const res = await t.request("PATCH", `/v1/ext/tasks/${task.task_id}`, {
        title: "Call back",
        description: "d2",
        due_at: "2026-03-02T10:00:00Z",
        priority: "high",
        task_type: "meeting",
        assigned_to: "bob",
        item_id: item.item_id,
        notes: null,
        duration_minutes: 20,
        reminder_minutes: null,
        is_completed: true,
      }, key);
      expect(res.status).toBe(200);
      const events = await eventsOf(task.task_id);
      expect(events.map((e) => e.type)).toEqual(["task.created", "task.updated", "task.completed"]);
      const payload = events[1]!.payload;
      expect(events[2]!.payload).toEqual(payload);
      expect(TaskChangedEventSchema.safeParse(payload).success).toBe(true);
      expect(payload).toEqual({
        ...res.body,
        changed_fields: [...TASK_CHANGE_FIELDS],
        previous: {
          title: "Call",
          description: "d",
          due_at: "2026-03-01T09:30:00.000Z",
          priority: "low",
          is_completed: false,
          completed_at: null,
          task_type: "call",
          assigned_to: "ada",
          item_id: null,
          notes: "n",
          duration_minutes: 10,
          reminder_minutes: 5,
        },
      });
    });

    it("gives the completion time as previous completed_at when a task is reopened", async () => {
      const task = await newTask({ is_completed: true });
      await t.request("PATCH", `/v1/ext/tasks/${task.task_id}`, { is_completed: false }, key);
      const events = await eventsOf(task.task_id);
      expect(events.map((e) => e.type)).toEqual(["task.created", "task.completed", "task.updated"]);
      expect(events[2]!.payload.changed_fields).toEqual(["is_completed", "completed_at"]);
      expect(events[2]!.payload.previous).toEqual({ is_completed: true, completed_at: task.completed_at });
    });

    it("writes nothing for a PATCH that changes nothing", async () => {
      const task = await newTask({ priority: "high" });
      await t.request("PATCH", `/v1/ext/tasks/${task.task_id}`, { priority: "high", due_at: "2026-03-01T10:30:00+01:00" }, key);
      expect((await eventsOf(task.task_id)).map((e) => e.type)).toEqual(["task.created"]);
    });

    it("chains concurrent updates of one task: each previous title is the one the update before it stored", async () => {
      const task = await newTask();
      const titles = Array.from({ length: 8 }, (_, i) => `Title ${i}`);
      const results = await Promise.all(titles.map((title) => t.request("PATCH", `/v1/ext/tasks/${task.task_id}`, { title }, key)));
      expect(results.every((r) => r.status === 200)).toBe(true);
      const updates = (await eventsOf(task.task_id)).filter((e) => e.type === "task.updated").map((e) => e.payload);
      expect(updates).toHaveLength(titles.length);
      let before = "Call";
      for (const payload of updates) {
        expect(payload.previous).toEqual({ title: before });
        before = payload.title;
      }
      expect(new Set(updates.map((p) => p.title))).toEqual(new Set(titles));
    });
  });
});
