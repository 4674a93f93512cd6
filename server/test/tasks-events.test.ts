import { startTestServer, type TestServer } from "./helpers/test-server";

describe("task events (outbox)", () => {
  let t: TestServer;
  let key: string;
  beforeAll(async () => {
    t = await startTestServer();
    key = (await t.newKey(["tasks:read", "tasks:write"])).key;
  });
  afterAll(async () => {
    await t?.close();
  });

  const create = async (extra: Record<string, unknown> = {}) => {
    const res = await t.request("POST", "/v1/ext/tasks", { title: "Follow up", due_at: "2026-03-01T09:30:00Z", assigned_to: "ada", ...extra }, key);
    expect(res.status).toBe(201);
    return res.body;
  };
  /** The events recorded for a task, in commit order. */
  const eventsOf = async (taskId: string) =>
    (await t.server.ctx.prisma.webhookEvent.findMany({ where: { resourceId: taskId }, orderBy: { seq: "asc" } })).map((e) => ({
      type: e.type,
      companyId: e.companyId,
      payload: e.payload,
    }));

  it("records task.created with the created task as payload", async () => {
    const task = await create();
    expect(await eventsOf(task.task_id)).toEqual([{ type: "task.created", companyId: t.companyId, payload: task }]);
  });

  it("records task.created then task.completed for a task created completed", async () => {
    const task = await create({ is_completed: true });
    expect((await eventsOf(task.task_id)).map((e) => e.type)).toEqual(["task.created", "task.completed"]);
  });

  it("records task.updated with the updated task as payload", async () => {
    const task = await create();
    const updated = (await t.request("PATCH", `/v1/ext/tasks/${task.task_id}`, { title: "Follow up today" }, key)).body;
    const events = await eventsOf(task.task_id);
    expect(events.map((e) => e.type)).toEqual(["task.created", "task.updated"]);
    expect(events[1]!.payload).toEqual({ ...updated, changed_fields: ["title"], previous: { title: "Follow up" } });
  });

  it("records task.updated and task.completed when an update completes the task", async () => {
    const task = await create();
    const completed = (await t.request("PATCH", `/v1/ext/tasks/${task.task_id}`, { is_completed: true }, key)).body;
    const events = await eventsOf(task.task_id);
    expect(events.map((e) => e.type)).toEqual(["task.created", "task.updated", "task.completed"]);
    const changed = { ...completed, changed_fields: ["is_completed", "completed_at"], previous: { is_completed: false, completed_at: null } };
    expect(events[1]!.payload).toEqual(changed);
    expect(events[2]!.payload).toEqual(changed);
  });

  it("does not record task.completed again for a task that was already completed", async () => {
    const task = await create({ is_completed: true });
    await t.request("PATCH", `/v1/ext/tasks/${task.task_id}`, { is_completed: true, notes: "still done" }, key);
    expect((await eventsOf(task.task_id)).map((e) => e.type)).toEqual(["task.created", "task.completed", "task.updated"]);
  });

  it("records task.updated but not task.completed when a task is reopened", async () => {
    const task = await create({ is_completed: true });
    await t.request("PATCH", `/v1/ext/tasks/${task.task_id}`, { is_completed: false }, key);
    expect((await eventsOf(task.task_id)).map((e) => e.type)).toEqual(["task.created", "task.completed", "task.updated"]);
  });

  it("records nothing for an update that changes nothing", async () => {
    const task = await create({ priority: "high" });
    const res = await t.request("PATCH", `/v1/ext/tasks/${task.task_id}`, { priority: "high", title: task.title, due_at: "2026-03-01T10:30:00+01:00" }, key);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(task);
    expect((await eventsOf(task.task_id)).map((e) => e.type)).toEqual(["task.created"]);
  });

  it("records no event when the change is refused", async () => {
    const task = await create();
    const res = await t.request("PATCH", `/v1/ext/tasks/${task.task_id}`, { title: "Refused", item_id: "no-such-item" }, key);
    expect(res.status).toBe(422);
    expect((await eventsOf(task.task_id)).map((e) => e.type)).toEqual(["task.created"]);
    expect((await t.request("GET", `/v1/ext/tasks/${task.task_id}`, undefined, key)).body.title).toBe("Follow up");
  });
});
