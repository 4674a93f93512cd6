/**
 * PATCH /v1/ext/items/{item_id} (spec "Items", "States and transitions"; CONTRACT "Responses", "Errors",
 * "Pipelines, blueprints, transitions", "Events and deliveries").
 */
import { ItemChangedEventSchema } from "@stageline/shared";
import { startTestServer, type TestServer } from "./helpers/test-server";

type Api = (method: string, path: string, body?: unknown) => ReturnType<TestServer["request"]>;

describe("items: update", () => {
  let t: TestServer;
  let api: Api;
  const useFreshKey = async () => {
    const { key } = await t.newKey();
    api = (method, path, body) => t.request(method, path, body, key);
  };
  const stage = (i: number) => t.pipeline.stages[i]!;
  /** Creates an item in Lead/Open and returns it. */
  const newItem = async (extra: Record<string, unknown> = {}) => {
    const res = await api("POST", "/v1/ext/items", { name: "Acme", pipeline_id: t.pipeline.id, stage_id: stage(0).id, ...extra });
    expect(res.status).toBe(201);
    return res.body;
  };
  const patch = (id: string, body: unknown) => api("PATCH", `/v1/ext/items/${id}`, body);
  const eventsOf = (itemId: string) =>
    t.server.ctx.prisma.webhookEvent.findMany({ where: { resourceId: itemId }, orderBy: { seq: "asc" } });

  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t?.close();
  });

  describe("changes and versions", () => {
    beforeAll(useFreshKey);

    it("applies a change: 200, the full item, version + 1 and a later updated_at", async () => {
      const item = await newItem();
      const res = await patch(item.item_id, { name: "Acme (renewal)" });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        ...item,
        name: "Acme (renewal)",
        version: 2,
        updated_at: expect.any(String),
      });
      expect(Date.parse(res.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(item.updated_at));
      expect((await api("GET", `/v1/ext/items/${item.item_id}`)).body).toEqual(res.body);
    });

    it("accepts a matching version and increments it with each change", async () => {
      const item = await newItem();
      const first = await patch(item.item_id, { version: 1, contact_id: "c-1" });
      expect(first.body.version).toBe(2);
      const second = await patch(item.item_id, { version: 2, source: "import" });
      expect(second.status).toBe(200);
      expect(second.body).toMatchObject({ version: 3, contact_id: "c-1", source: "import" });
    });

    it("rejects a stale version with 409 version_conflict carrying current_version, and changes nothing", async () => {
      const item = await newItem();
      await patch(item.item_id, { name: "Changed elsewhere" });
      const res = await patch(item.item_id, { version: 1, name: "My change" });
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ code: "version_conflict", current_version: 2 });
      expect((await api("GET", `/v1/ext/items/${item.item_id}`)).body).toMatchObject({ name: "Changed elsewhere", version: 2 });
    });

    it("lets exactly one of two concurrent updates with the same version win", async () => {
      const item = await newItem();
      const results = await Promise.all([
        patch(item.item_id, { version: 1, name: "Writer A" }),
        patch(item.item_id, { version: 1, name: "Writer B" }),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
      const winner = results.find((r) => r.status === 200)!;
      const loser = results.find((r) => r.status === 409)!;
      expect(loser.body.current_version).toBe(2);
      expect((await api("GET", `/v1/ext/items/${item.item_id}`)).body).toMatchObject({ name: winner.body.name, version: 2 });
    });

    it("applies concurrent updates without a version one after the other, losing none", async () => {
      const item = await newItem();
      const results = await Promise.all([
        patch(item.item_id, { metadata: { email: "a@example.com" } }),
        patch(item.item_id, { metadata: { deal_value: 10 } }),
        patch(item.item_id, { contact_id: "c-9" }),
      ]);
      expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
      expect((await api("GET", `/v1/ext/items/${item.item_id}`)).body).toMatchObject({
        email: "a@example.com",
        deal_value: 10,
        contact_id: "c-9",
        version: 4,
      });
    });

    it("re-applies racing updates without a version until each has landed once (8 at once, 8 events)", async () => {
      const item = await newItem();
      const names = Array.from({ length: 8 }, (_, i) => `Racer ${i}`);
      const results = await Promise.all(names.map((name) => patch(item.item_id, { name })));
      expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
      expect(results.map((r) => r.body.version).sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
      const events = await t.server.ctx.prisma.webhookEvent.findMany({
        where: { resourceId: item.item_id, type: "item.updated" },
        orderBy: { seq: "asc" },
      });
      expect(events.map((e) => (e.payload as { version: number }).version)).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
    });

    it("returns the item unchanged for a PATCH that changes nothing: no new version, no event", async () => {
      const item = await newItem({ metadata: { email: "same@example.com" } });
      const res = await patch(item.item_id, { name: "Acme", stage_id: stage(0).id, metadata: { email: "same@example.com" }, version: 1 });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(item);
      expect((await eventsOf(item.item_id)).map((e) => e.type)).toEqual(["item.created"]);
    });

    it("unlinks the contact with contact_id null", async () => {
      const item = await newItem({ contact_id: "c-2" });
      const res = await patch(item.item_id, { contact_id: null });
      expect(res.body).toMatchObject({ contact_id: null, version: 2 });
    });
  });

  describe("moves between stages and statuses", () => {
    beforeAll(useFreshKey);

    it("moves to another stage of the pipeline, into that stage's first status", async () => {
      const item = await newItem({ status_id: stage(0).statuses[1]!.id });
      expect(item.status).toBe("Won");
      const res = await patch(item.item_id, { stage_id: stage(2).id });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ stage: "Proposal", stage_id: stage(2).id, status: "Open", status_id: stage(2).statuses[0]!.id, version: 2 });
    });

    it("moves stage and status together", async () => {
      const item = await newItem();
      const res = await patch(item.item_id, { stage_id: stage(3).id, status_id: stage(3).statuses[2]!.id });
      expect(res.body).toMatchObject({ stage: "Closed", status: "Lost" });
    });

    it("changes only the status within the current stage", async () => {
      const item = await newItem();
      const res = await patch(item.item_id, { status_id: stage(0).statuses[2]!.id });
      expect(res.body).toMatchObject({ stage: "Lead", status: "Lost", version: 2 });
    });

    it("keeps the status when stage_id names the current stage", async () => {
      const item = await newItem({ status_id: stage(0).statuses[1]!.id });
      const res = await patch(item.item_id, { stage_id: stage(0).id, name: "Renamed" });
      expect(res.body).toMatchObject({ stage: "Lead", status: "Won", version: 2 });
    });

    it("rejects a status the new stage does not offer with 422 naming status_id", async () => {
      const item = await newItem();
      const res = await patch(item.item_id, { stage_id: stage(1).id, status_id: stage(2).statuses[0]!.id });
      expect(res.status).toBe(422);
      expect(res.body.code).toBe("invalid_reference");
      expect(res.body.errors.map((e: { path: string }) => e.path)).toEqual(["status_id"]);
    });

    it("rejects a status of another stage when the stage stays with 422", async () => {
      const item = await newItem();
      const res = await patch(item.item_id, { status_id: stage(1).statuses[1]!.id });
      expect(res.status).toBe(422);
      expect(res.body.errors[0].path).toBe("status_id");
    });

    it("rejects a stage of another pipeline with 422 naming stage_id, leaving the item as it was", async () => {
      const item = await newItem();
      const other = await t.newCompany("Foreign Stage Co");
      const res = await patch(item.item_id, { stage_id: other.pipeline.stages[1]!.id });
      expect(res.status).toBe(422);
      expect(res.body.errors.map((e: { path: string }) => e.path)).toEqual(["stage_id"]);
      expect((await api("GET", `/v1/ext/items/${item.item_id}`)).body).toEqual(item);
    });
  });

  describe("custom fields", () => {
    beforeAll(useFreshKey);

    it("merges metadata: fields left out keep their values", async () => {
      const item = await newItem({ metadata: { email: "keep@example.com" } });
      const res = await patch(item.item_id, { metadata: { deal_value: 2500 } });
      expect(res.body).toMatchObject({ email: "keep@example.com", deal_value: 2500, version: 2 });
    });

    it("clears an optional field with null", async () => {
      const item = await newItem({ metadata: { email: "gone@example.com", deal_value: 5 } });
      const res = await patch(item.item_id, { metadata: { email: null } });
      expect(res.body).toMatchObject({ email: null, deal_value: 5, version: 2 });
      const stored = await t.server.ctx.prisma.item.findUniqueOrThrow({ where: { id: item.item_id } });
      expect(stored.metadata).toEqual({ deal_value: 5 });
    });

    it("rejects an unknown custom field with 422", async () => {
      const item = await newItem();
      const res = await patch(item.item_id, { metadata: { colour: "red" } });
      expect(res.status).toBe(422);
      expect(res.body.errors.map((e: { path: string }) => e.path)).toEqual(["metadata.colour"]);
    });

    it("rejects a custom value of the wrong type with 422", async () => {
      const item = await newItem();
      const res = await patch(item.item_id, { metadata: { deal_value: "abc", email: "not an email" } });
      expect(res.status).toBe(422);
      expect(res.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(["metadata.deal_value", "metadata.email"]);
    });

    it("refuses to clear a required field", async () => {
      const prisma = t.server.ctx.prisma;
      const pipeline = await prisma.pipeline.create({
        data: {
          companyId: t.companyId,
          name: "Support",
          shortIdPrefix: "SUP",
          blueprint: { custom_fields: [{ key: "severity", label: "Severity", type: "select", required: true, options: ["low", "high"] }] },
          stages: { create: [{ name: "New", position: 0, statuses: { create: [{ name: "Open", position: 0 }] } }] },
        },
        include: { stages: true },
      });
      const created = await api("POST", "/v1/ext/items", {
        name: "Ticket",
        pipeline_id: pipeline.id,
        stage_id: pipeline.stages[0]!.id,
        metadata: { severity: "low" },
      });
      expect(created.status).toBe(201);
      const res = await patch(created.body.item_id, { metadata: { severity: null } });
      expect(res.status).toBe(422);
      expect(res.body.errors[0].path).toBe("metadata.severity");
      const changed = await patch(created.body.item_id, { metadata: { severity: "high" } });
      expect(changed.body).toMatchObject({ severity: "high", version: 2 });
    });
  });

  describe("events", () => {
    beforeAll(useFreshKey);

    it("writes item.updated with changed_fields and previous, its payload equal to the response", async () => {
      const item = await newItem();
      const res = await patch(item.item_id, { name: "Evented", metadata: { deal_value: 7 } });
      const events = await eventsOf(item.item_id);
      expect(events.map((e) => e.type)).toEqual(["item.created", "item.updated"]);
      const payload = events[1]!.payload as Record<string, unknown>;
      expect(ItemChangedEventSchema.safeParse(payload).success).toBe(true);
      expect(payload).toEqual({ ...res.body, changed_fields: ["name", "deal_value"], previous: { stage: "Lead", status: "Open", name: "Acme", deal_value: null } });
    });

    it("adds item.stage_changed when the stage changes, with the same payload", async () => {
      const item = await newItem({ status_id: stage(0).statuses[1]!.id });
      const res = await patch(item.item_id, { stage_id: stage(1).id });
      const events = await eventsOf(item.item_id);
      expect(events.map((e) => e.type)).toEqual(["item.created", "item.updated", "item.stage_changed"]);
      const expected = { ...res.body, changed_fields: ["stage", "status"], previous: { stage: "Lead", status: "Won" } };
      expect(events[1]!.payload).toEqual(expected);
      expect(events[2]!.payload).toEqual(expected);
    });

    it("writes no stage_changed event for a status-only change", async () => {
      const item = await newItem();
      await patch(item.item_id, { status_id: stage(0).statuses[1]!.id });
      const events = await eventsOf(item.item_id);
      expect(events.map((e) => e.type)).toEqual(["item.created", "item.updated"]);
      expect((events[1]!.payload as { changed_fields: string[] }).changed_fields).toEqual(["status"]);
    });

    it("writes no event for a rejected update", async () => {
      const item = await newItem();
      await patch(item.item_id, { version: 5, name: "Stale" });
      await patch(item.item_id, { metadata: { deal_value: "abc" } });
      expect((await eventsOf(item.item_id)).map((e) => e.type)).toEqual(["item.created"]);
    });
  });

  describe("errors", () => {
    beforeAll(useFreshKey);

    it("answers 404 for an unknown item", async () => {
      const res = await patch("no-such-item", { name: "x" });
      expect(res.status).toBe(404);
      expect(res.body.code).toBe("not_found");
    });

    it("answers 404 for another company's item and leaves it alone", async () => {
      const other = await t.newCompany("Untouchable Co");
      const theirs = await t.request(
        "POST",
        "/v1/ext/items",
        { name: "Theirs", pipeline_id: other.pipeline.id, stage_id: other.pipeline.stages[0]!.id },
        other.apiKey,
      );
      const res = await patch(theirs.body.item_id, { name: "Mine now" });
      expect(res.status).toBe(404);
      const after = await t.request("GET", `/v1/ext/items/${theirs.body.item_id}`, undefined, other.apiKey);
      expect(after.body).toMatchObject({ name: "Theirs", version: 1 });
    });

    it("answers 400 for an empty body", async () => {
      const item = await newItem();
      const res = await patch(item.item_id, {});
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("validation_failed");
    });

    it("answers 400 listing every bad field", async () => {
      const item = await newItem();
      const res = await patch(item.item_id, { version: 0, name: "", pipeline_id: "x" });
      expect(res.status).toBe(400);
      expect(res.body.errors).toHaveLength(3);
    });

    it("refuses a key lacking items:write with 403", async () => {
      const item = await newItem();
      const { key } = await t.newKey(["items:read"]);
      const res = await t.request("PATCH", `/v1/ext/items/${item.item_id}`, { name: "x" }, key);
      expect(res.status).toBe(403);
      expect(res.body.detail).toContain("items:write");
    });
  });
});
