/**
 * Issue 12: task create and update are one statement each (db/tasks.ts), like items. What the statements must keep
 * exactly: the event payload is the response's JSON text byte for byte (key order included), events follow each
 * other in `seq` order, an idempotent replay is the first response's text, and concurrent updates of one task apply
 * one after the other (none lost, `task.completed` once).
 */
import { startTestServer, type TestServer } from "./helpers/test-server";

describe("task writes (one statement each)", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t?.close();
  });

  /** Sends a request and returns the status and the exact response text. */
  const raw = async (method: string, path: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(t.url + path, {
      method,
      headers: { "x-api-key": t.apiKey, "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
    return { status: res.status, text: await res.text(), headers: res.headers };
  };
  /** The task's events in `seq` order, with the payload as stored (json text). */
  const eventsOf = (taskId: string) =>
    t.server.ctx.prisma.$queryRawUnsafe<{ type: string; payload: string }[]>(
      `SELECT type, payload::text AS payload FROM webhook_events WHERE resource_id = $1 ORDER BY seq`,
      taskId,
    );
  const base = { title: "Call back", due_at: "2026-03-01T09:30:00.123+01:00", assigned_to: "ada" };

  it("stores the response's exact JSON text as the payload of task.created and task.completed, in that order", async () => {
    const created = await raw("POST", "/v1/ext/tasks", { ...base, is_completed: true, notes: "é \u2028 \"q\"", duration_minutes: 30 });
    expect(created.status).toBe(201);
    const id = JSON.parse(created.text).task_id as string;
    expect(await eventsOf(id)).toEqual([
      { type: "task.created", payload: created.text },
      { type: "task.completed", payload: created.text },
    ]);
    expect(JSON.parse(created.text).due_at).toBe("2026-03-01T08:30:00.123Z");
  });

  it("stores the update's exact JSON text as the payload of task.updated and task.completed", async () => {
    const created = JSON.parse((await raw("POST", "/v1/ext/tasks", base)).text);
    const updated = await raw("PATCH", `/v1/ext/tasks/${created.task_id}`, { is_completed: true, priority: "high" });
    expect(updated.status).toBe(200);
    const events = await eventsOf(created.task_id);
    expect(events.map((e) => e.type)).toEqual(["task.created", "task.updated", "task.completed"]);
    // The response's text, then changed_fields and previous (CONTRACT "Previous values in update events").
    const changed = `,"changed_fields":["priority","is_completed","completed_at"],"previous":{"priority":"none","is_completed":false,"completed_at":null}}`;
    expect(events[1]!.payload).toBe(updated.text.replace(/\}$/, changed));
    expect(events[2]!.payload).toBe(events[1]!.payload);
    const read = await raw("GET", `/v1/ext/tasks/${created.task_id}`, undefined);
    expect(read.text).toBe(updated.text);
  });

  it("replays an idempotent create with the first response's exact text", async () => {
    const body = { ...base, title: "Once" };
    const first = await raw("POST", "/v1/ext/tasks", body, { "Idempotency-Key": "tasks-writes-once" });
    const again = await raw("POST", "/v1/ext/tasks", body, { "Idempotency-Key": "tasks-writes-once" });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.text).toBe(first.text);
    expect(again.headers.get("location")).toBe(first.headers.get("location"));
    expect(await eventsOf(JSON.parse(first.text).task_id)).toHaveLength(1);
  });

  it("applies concurrent updates of one task one after the other: none is lost", async () => {
    const created = JSON.parse((await raw("POST", "/v1/ext/tasks", base)).text);
    const item = (await t.request("POST", "/v1/ext/items", { pipeline_id: t.pipeline.id, stage_id: t.pipeline.stages[0]!.id, name: "Linked" })).body;
    const changes = [
      { title: "New title" },
      { description: "New description" },
      { due_at: "2027-01-01T00:00:00.000Z" },
      { priority: "urgent" },
      { task_type: "call" },
      { assigned_to: "grace" },
      { item_id: item.item_id },
      { duration_minutes: 45 },
      { reminder_minutes: 10 },
      { notes: "New notes" },
    ];
    const responses = await Promise.all(changes.map((change) => raw("PATCH", `/v1/ext/tasks/${created.task_id}`, change)));
    expect(responses.map((r) => r.status)).toEqual(changes.map(() => 200));
    const final = JSON.parse((await raw("GET", `/v1/ext/tasks/${created.task_id}`, undefined)).text);
    expect(final).toMatchObject(Object.assign({}, ...changes));
    const updates = (await eventsOf(created.task_id)).filter((e) => e.type === "task.updated");
    expect(updates).toHaveLength(changes.length);
    // The last event describes the final state; each names the one field its request changed.
    const last = JSON.parse(updates[updates.length - 1]!.payload);
    expect(last.changed_fields).toHaveLength(1);
    delete last.changed_fields;
    delete last.previous;
    expect(last).toEqual(final);
    const named = updates.map((u) => JSON.parse(u.payload).changed_fields[0]).sort();
    expect(named).toEqual(changes.map((c) => Object.keys(c)[0]).sort());
  });

  it("records task.completed once when concurrent requests complete the same task", async () => {
    const created = JSON.parse((await raw("POST", "/v1/ext/tasks", base)).text);
    const responses = await Promise.all(Array.from({ length: 12 }, () => raw("PATCH", `/v1/ext/tasks/${created.task_id}`, { is_completed: true })));
    expect(responses.map((r) => r.status)).toEqual(responses.map(() => 200));
    const completedAt = new Set(responses.map((r) => JSON.parse(r.text).completed_at));
    expect(completedAt.size).toBe(1);
    expect((await eventsOf(created.task_id)).map((e) => e.type)).toEqual(["task.created", "task.updated", "task.completed"]);
  });
});
