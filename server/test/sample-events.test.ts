/**
 * GET /v1/ext/webhooks/sample/{resource}?event=NAME (SampleQuerySchema; CONTRACT "Item deletion and erasure":
 * item.deleted has its own sample; "Previous values in update events"): the sample is that event's delivery body,
 * built from the company's pipeline; an event of the other resource is a 400; without `event` nothing changes.
 */
import { EVENT_PAYLOAD_SCHEMAS, EVENT_RESOURCES, ItemSchema, TaskSchema, type EventName } from "@stageline/shared";
import { startTestServer, type TestServer } from "./helpers/test-server";

describe("event samples", () => {
  let t: TestServer;
  const sample = (resource: string, event?: string) =>
    t.request("GET", `/v1/ext/webhooks/sample/${resource}${event === undefined ? "" : `?event=${encodeURIComponent(event)}`}`);

  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t?.close();
  });

  it("item.deleted: the sample item plus deleted_at", async () => {
    const plain = (await sample("items")).body;
    const res = await sample("items", "item.deleted");
    expect(res.status).toBe(200);
    expect(EVENT_PAYLOAD_SCHEMAS["item.deleted"].parse(res.body)).toBeTruthy();
    expect(res.body).toEqual({
      ...plain,
      deleted_at: expect.any(String),
      deleted_note_ids: ["sample_note"],
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(Number.isNaN(Date.parse(res.body.deleted_at))).toBe(false);
  });

  it("item.updated: changed_fields with a custom field of the blueprint and previous for each, stage and status too", async () => {
    const res = await sample("items", "item.updated");
    expect(res.status).toBe(200);
    expect(EVENT_PAYLOAD_SCHEMAS["item.updated"].parse(res.body)).toBeTruthy();
    expect(res.body.changed_fields).toEqual(["name", "email"]);
    expect(res.body.previous).toEqual({ stage: "Lead", status: "Open", name: expect.any(String), email: null });
    expect(res.body.version).toBe(2);
  });

  it("item.stage_changed: previous stage and status are names of the pipeline", async () => {
    const res = await sample("items", "item.stage_changed");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ stage: "Lead", changed_fields: ["stage", "status"], previous: { stage: "Qualified", status: "Open" } });
  });

  it("item.created is the plain item", async () => {
    const res = await sample("items", "item.created");
    expect(ItemSchema.parse(res.body)).toBeTruthy();
    expect(res.body.changed_fields).toBeUndefined();
  });

  it("task.updated and task.completed: changed_fields and previous in task field names", async () => {
    const updated = await sample("tasks", "task.updated");
    expect(updated.status).toBe(200);
    expect(EVENT_PAYLOAD_SCHEMAS["task.updated"].parse(updated.body)).toBeTruthy();
    expect(updated.body).toMatchObject({ changed_fields: ["title", "due_at"], previous: { title: expect.any(String), due_at: expect.any(String) } });
    const completed = await sample("tasks", "task.completed");
    expect(completed.body).toMatchObject({ is_completed: true, changed_fields: ["is_completed", "completed_at"], previous: { is_completed: false, completed_at: null } });
    expect(TaskSchema.strict().parse((await sample("tasks", "task.created")).body)).toBeTruthy();
  });

  it("every event parses with its payload schema on its own resource", async () => {
    for (const event of Object.keys(EVENT_PAYLOAD_SCHEMAS) as EventName[]) {
      const resource = EVENT_RESOURCES[event];
      const res = await sample(resource, event);
      expect(res.status).toBe(200);
      expect(EVENT_PAYLOAD_SCHEMAS[event].safeParse(res.body).success).toBe(true);
    }
  });

  it("an event of the other resource, or an unknown event, is a 400", async () => {
    for (const [resource, event] of [["items", "task.updated"], ["tasks", "item.deleted"], ["items", "item.exploded"], ["tasks", "x".repeat(500)]]) {
      const res = await sample(resource!, event);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("validation_failed");
    }
  });
});
