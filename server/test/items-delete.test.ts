/**
 * DELETE /v1/ext/items/{item_id} (CONTRACT "Item deletion and erasure"): 204, then 404 everywhere; optimistic
 * locking; tasks unlinked with their task.updated events; item.deleted in the same transaction; erasure of earlier
 * event bodies and stored Idempotency-Key responses; races; and what an attacker can try.
 * The whole-database erasure proof (a dump holds the marker zero times) is item-erasure-dump.test.ts.
 */
import { ItemDeletedEventSchema, TaskChangedEventSchema } from "@stageline/shared";
import { purgeWebhookLog } from "../src/webhooks/retention";
import { startReceiver, waitUntil, type Receiver } from "./helpers/receiver";
import { startTestServerWithRateLimit, type TestServer } from "./helpers/test-server";

describe("items: delete", () => {
  let t: TestServer;
  let receiver: Receiver;
  const stage = (i: number) => t.pipeline.stages[i]!;
  const api = (method: string, path: string, body?: unknown, key?: string, headers?: Record<string, string>) =>
    t.request(method, path, body, key ?? t.apiKey, headers);
  const newItem = async (extra: Record<string, unknown> = {}, headers?: Record<string, string>) => {
    const res = await api("POST", "/v1/ext/items", { name: "Acme", pipeline_id: t.pipeline.id, stage_id: stage(0).id, ...extra }, undefined, headers);
    expect(res.status).toBe(201);
    return res.body;
  };
  const del = (id: string, query = "", key?: string) => api("DELETE", `/v1/ext/items/${id}${query}`, undefined, key);
  const eventsOf = (resourceId: string) =>
    t.server.ctx.prisma.webhookEvent.findMany({ where: { resourceId }, orderBy: { seq: "asc" } });

  beforeAll(async () => {
    t = await startTestServerWithRateLimit(10_000);
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  it("answers 204 with no body; then GET, PATCH and DELETE are 404 and no list, filter or duplicate check finds it", async () => {
    const item = await newItem({ name: "Doomed deal", metadata: { email: "doomed@example.com" } });
    const res = await del(item.item_id);
    expect(res.status).toBe(204);
    expect(res.body).toBeUndefined();
    expect((await api("GET", `/v1/ext/items/${item.item_id}`)).status).toBe(404);
    expect((await api("PATCH", `/v1/ext/items/${item.item_id}`, { name: "Back" })).status).toBe(404);
    expect((await del(item.item_id)).status).toBe(404);
    const lists = [
      "/v1/ext/items",
      `/v1/ext/items?short_id=${item.short_id}`,
      "/v1/ext/items?name=Doomed%20deal",
      "/v1/ext/items?q=Doomed",
      `/v1/ext/items?pipeline_id=${t.pipeline.id}`,
    ];
    for (const path of lists) {
      const list = await api("GET", path);
      expect(list.status).toBe(200);
      expect(list.body.map((i: { item_id: string }) => i.item_id)).not.toContain(item.item_id);
    }
    const dup = await api("POST", "/v1/ext/items/check-duplicates", { pipeline_id: t.pipeline.id, metadata: { email: "doomed@example.com" } });
    expect(dup.status).toBe(200);
    expect(dup.body).toEqual([]);
    expect(await t.server.ctx.prisma.item.count({ where: { id: item.item_id } })).toBe(0);
  });

  it("never reuses the short_id: the next item of the pipeline gets the next number", async () => {
    const a = await newItem();
    expect((await del(a.item_id)).status).toBe(204);
    const b = await newItem();
    const n = (shortId: string) => Number(shortId.split("-").pop());
    expect(n(b.short_id)).toBe(n(a.short_id) + 1);
  });

  it("checks an optional version: a stale one is 409 with current_version and deletes nothing", async () => {
    const item = await newItem();
    await api("PATCH", `/v1/ext/items/${item.item_id}`, { name: "Renamed" });
    const stale = await del(item.item_id, "?version=1");
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({ code: "version_conflict", current_version: 2 });
    expect((await api("GET", `/v1/ext/items/${item.item_id}`)).status).toBe(200);
    expect((await del(item.item_id, "?version=2")).status).toBe(204);
  });

  it("refuses a malformed version (400) and a request body (400, JSON or not), deleting nothing; an empty {} is accepted", async () => {
    const item = await newItem();
    for (const q of ["?version=0", "?version=abc", "?version=1.5", "?version=99999999999"]) {
      const res = await del(item.item_id, q);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("validation_failed");
    }
    const withBody = await api("DELETE", `/v1/ext/items/${item.item_id}`, { version: 1 });
    expect(withBody.status).toBe(400);
    const textBody = await fetch(`${t.url}/v1/ext/items/${item.item_id}`, {
      method: "DELETE",
      headers: { "x-api-key": t.apiKey, "content-type": "text/plain" },
      body: "version=1",
    });
    expect(textBody.status).toBe(400);
    expect((await api("GET", `/v1/ext/items/${item.item_id}`)).status).toBe(200);
    expect((await api("DELETE", `/v1/ext/items/${item.item_id}`, {})).status).toBe(204);
  });

  it("unlinks the item's tasks (item_id null), each with a task.updated event; a task cannot link to it afterwards (422)", async () => {
    const item = await newItem();
    const task = async () =>
      (await api("POST", "/v1/ext/tasks", { title: "Call", due_at: "2026-12-01T09:00:00Z", assigned_to: "ada", item_id: item.item_id })).body;
    const [t1, t2] = [await task(), await task()];
    const other = (await api("POST", "/v1/ext/tasks", { title: "Other", due_at: "2026-12-01T09:00:00Z", assigned_to: "ada" })).body;
    expect((await del(item.item_id)).status).toBe(204);
    for (const linked of [t1, t2]) {
      const now = (await api("GET", `/v1/ext/tasks/${linked.task_id}`)).body;
      expect(now.item_id).toBeNull();
      const events = await eventsOf(linked.task_id);
      const last = events[events.length - 1]!;
      expect(last.type).toBe("task.updated");
      const payload = TaskChangedEventSchema.parse(last.payload);
      expect(payload).toMatchObject({ task_id: linked.task_id, item_id: null, changed_fields: ["item_id"], previous: { item_id: item.item_id } });
      expect(payload.updated_at).toBe(now.updated_at);
    }
    expect((await eventsOf(other.task_id)).map((e) => e.type)).toEqual(["task.created"]);
    const link = await api("POST", "/v1/ext/tasks", { title: "Late", due_at: "2026-12-01T09:00:00Z", assigned_to: "ada", item_id: item.item_id });
    expect(link.status).toBe(422);
    const relink = await api("PATCH", `/v1/ext/tasks/${other.task_id}`, { item_id: item.item_id });
    expect(relink.status).toBe(422);
  });

  it("writes one item.deleted whose body is the last state plus deleted_at, delivered to subscribers, then erased", async () => {
    const hook = await api("POST", "/v1/ext/webhooks", { target_url: `${receiver.url}/deleted`, event: "item.deleted" });
    expect(hook.status).toBe(201);
    try {
      const item = await newItem({ name: "Last state", metadata: { deal_value: 42 } });
      const updated = (await api("PATCH", `/v1/ext/items/${item.item_id}`, { stage_id: stage(1).id })).body;
      expect((await del(item.item_id)).status).toBe(204);
      await receiver.waitFor(() => receiver.accepted("/deleted").some((r) => r.body.toString().includes(item.item_id)), "item.deleted delivery");
      const sent = receiver.accepted("/deleted").find((r) => r.body.toString().includes(item.item_id))!;
      expect(sent.headers["x-webhook-event"]).toBe("item.deleted");
      const body = ItemDeletedEventSchema.parse(JSON.parse(sent.body.toString()));
      expect(body).toEqual({ ...updated, deleted_at: expect.any(String), deleted_note_ids: [] });
      expect(Date.parse(body.deleted_at)).toBeGreaterThanOrEqual(Date.parse(updated.updated_at));
      // Every event of the item now holds only the erased body, the item.deleted one too once its delivery ended.
      await waitUntil(async () => (await eventsOf(item.item_id)).every((e) => e.erasedAt !== null), "item.deleted erased after delivery");
      const events = await eventsOf(item.item_id);
      expect(events.map((e) => e.type)).toEqual(["item.created", "item.updated", "item.stage_changed", "item.deleted"]);
      for (const e of events) expect(e.payload).toEqual({ item_id: item.item_id, erased: true });
    } finally {
      await api("DELETE", `/v1/ext/webhooks/${hook.body.id}`);
    }
  });

  it("erases the item.deleted body when its delivery fails for good (a 4xx), and when its subscription is deleted while it is pending", async () => {
    receiver.respondWith((req) => (req.path === "/refuses" ? { status: 400 } : req.path === "/down" ? { status: 503 } : undefined));
    const refuses = (await api("POST", "/v1/ext/webhooks", { target_url: `${receiver.url}/refuses`, event: "item.deleted" })).body;
    const down = (await api("POST", "/v1/ext/webhooks", { target_url: `${receiver.url}/down`, event: "item.deleted" })).body;
    try {
      const item = await newItem({ name: "Two endings" });
      expect((await del(item.item_id)).status).toBe(204);
      const deletedEvent = async () => (await eventsOf(item.item_id)).find((e) => e.type === "item.deleted")!;
      // One delivery failed for good, the other is still pending (retrying): the body is kept.
      await waitUntil(async () => (await api("GET", `/v1/ext/webhooks/${refuses.id}/deliveries`)).body[0]?.state === "failed", "the 400");
      await waitUntil(async () => (await t.server.ctx.prisma.webhookAttempt.count({ where: { delivery: { subscriptionId: down.id } } })) > 0, "a 503");
      expect((await deletedEvent()).erasedAt).toBeNull();
      expect(JSON.stringify((await deletedEvent()).payload)).toContain("Two endings");
      // Unsubscribing the pending one ends the last delivery: the body is erased.
      expect((await api("DELETE", `/v1/ext/webhooks/${down.id}`)).status).toBe(204);
      expect((await deletedEvent()).payload).toEqual({ item_id: item.item_id, erased: true });
      const attempts = await t.server.ctx.prisma.webhookAttempt.findMany({ where: { delivery: { eventId: (await deletedEvent()).id } } });
      for (const a of attempts) expect(a.responseExcerpt).toBeNull();
    } finally {
      receiver.respondWith(() => undefined);
      await api("DELETE", `/v1/ext/webhooks/${refuses.id}`);
      await api("DELETE", `/v1/ext/webhooks/${down.id}`);
    }
  });

  it("the retention job erases an item.deleted body whose deliveries all ended without the dispatcher erasing it", async () => {
    receiver.respondWith((req) => (req.path === "/crash" ? { status: 503 } : undefined));
    const hook = (await api("POST", "/v1/ext/webhooks", { target_url: `${receiver.url}/crash`, event: "item.deleted" })).body;
    try {
      const item = await newItem({ name: "Missed by a crash" });
      expect((await del(item.item_id)).status).toBe(204);
      const deleted = async () => (await eventsOf(item.item_id)).find((e) => e.type === "item.deleted")!;
      expect((await deleted()).erasedAt).toBeNull(); // its delivery is pending (the target answers 503): the body is kept
      // The delivery ends behind the dispatcher's back, as a crash between recording it and erasing would leave it.
      await t.server.ctx.prisma.webhookDelivery.updateMany({ where: { eventId: (await deleted()).id }, data: { state: "failed", completedAt: new Date() } });
      await purgeWebhookLog(t.server.ctx.prisma, { retentionDays: 30, intervalMs: 600_000, batchSize: 500 }, new Date());
      expect((await deleted()).payload).toEqual({ item_id: item.item_id, erased: true });
    } finally {
      receiver.respondWith(() => undefined);
      await api("DELETE", `/v1/ext/webhooks/${hook.id}`);
    }
  });

  it("stores item.deleted already erased when nobody subscribes to it", async () => {
    const item = await newItem();
    expect((await del(item.item_id)).status).toBe(204);
    const deleted = (await eventsOf(item.item_id)).find((e) => e.type === "item.deleted")!;
    expect(deleted.payload).toEqual({ item_id: item.item_id, erased: true });
    expect(deleted.erasedAt).not.toBeNull();
  });

  it("erases item.deleted at once when every subscription's filter excludes it (no delivery to wait for)", async () => {
    const hook = await api("POST", "/v1/ext/webhooks", {
      target_url: `${receiver.url}/filtered`,
      event: "item.deleted",
      filter: { pipeline_id: t.pipeline.id, stage_id: stage(1).id },
    });
    expect(hook.status).toBe(201);
    try {
      const item = await newItem(); // in stage 0: the subscription's stage filter excludes its deletion
      expect((await del(item.item_id)).status).toBe(204);
      const deleted = (await eventsOf(item.item_id)).find((e) => e.type === "item.deleted")!;
      expect(deleted.payload).toEqual({ item_id: item.item_id, erased: true });
      expect(deleted.erasedAt).not.toBeNull();
      expect((await api("GET", `/v1/ext/webhooks/${hook.body.id}/deliveries`)).body).toEqual([]);
    } finally {
      await api("DELETE", `/v1/ext/webhooks/${hook.body.id}`);
    }
  });

  it("ends the item's earlier deliveries still pending as failed, and a redeliver of an erased delivery is 410 payload_erased", async () => {
    // A target that fails with 500: the item.created delivery stays pending (retrying).
    receiver.respondWith((req) => (req.path === "/failing" ? { status: 500, body: "echo" } : undefined));
    const hook = (await api("POST", "/v1/ext/webhooks", { target_url: `${receiver.url}/failing`, event: "item.created" })).body;
    try {
      const item = await newItem({ name: "Retry me" });
      await waitUntil(async () => (await t.server.ctx.prisma.webhookAttempt.count({ where: { delivery: { subscriptionId: hook.id } } })) > 0, "first attempt");
      expect((await del(item.item_id)).status).toBe(204);
      const deliveries = (await api("GET", `/v1/ext/webhooks/${hook.id}/deliveries`)).body;
      expect(deliveries).toHaveLength(1);
      expect(deliveries[0]).toMatchObject({ state: "failed", event: "item.created" });
      for (const attempt of deliveries[0].attempts) expect(attempt.response_excerpt).toBeNull();
      const redeliver = await api("POST", `/v1/ext/webhooks/${hook.id}/deliveries/${deliveries[0].id}/redeliver`);
      expect(redeliver.status).toBe(410);
      expect(redeliver.body.code).toBe("payload_erased");
    } finally {
      receiver.respondWith(() => undefined);
      await api("DELETE", `/v1/ext/webhooks/${hook.id}`);
    }
  });

  it("an attempt in flight when its item is deleted is logged and counted: the delivery never reads 0 attempts beside one listed", async () => {
    // The target holds the request until the test has deleted the item, then fails it (500, echoing nothing useful).
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    receiver.respondWith((req) => (req.path === "/held" ? { status: 500, body: "echo", hold: released } : undefined));
    const hook = (await api("POST", "/v1/ext/webhooks", { target_url: `${receiver.url}/held`, event: "item.created" })).body;
    try {
      const item = await newItem({ name: "In flight" });
      await receiver.waitFor(() => receiver.requests.some((r) => r.path === "/held"), "the attempt in flight");
      expect((await del(item.item_id)).status).toBe(204);
      release();
      await waitUntil(async () => (await t.server.ctx.prisma.webhookAttempt.count({ where: { delivery: { subscriptionId: hook.id } } })) > 0, "the attempt recorded");
      const deliveries = (await api("GET", `/v1/ext/webhooks/${hook.id}/deliveries`)).body;
      expect(deliveries).toHaveLength(1);
      expect(deliveries[0]).toMatchObject({ state: "failed", attempt_count: 1, last_status: 500 });
      expect(deliveries[0].attempts).toHaveLength(1);
      expect(deliveries[0].attempts[0].response_excerpt).toBeNull();
    } finally {
      release();
      receiver.respondWith(() => undefined);
      await api("DELETE", `/v1/ext/webhooks/${hook.id}`);
    }
  });

  it("replaces a stored Idempotency-Key response of the create: a retry gets 410 payload_erased and creates nothing", async () => {
    const key = `delete-replay-${Date.now()}`;
    const body = { name: "Idem", pipeline_id: t.pipeline.id, stage_id: stage(0).id };
    const first = await api("POST", "/v1/ext/items", body, undefined, { "idempotency-key": key });
    expect(first.status).toBe(201);
    expect((await del(first.body.item_id)).status).toBe(204);
    const before = await t.server.ctx.prisma.item.count({ where: { companyId: t.companyId } });
    const retry = await api("POST", "/v1/ext/items", body, undefined, { "idempotency-key": key });
    expect(retry.status).toBe(410);
    expect(retry.body.code).toBe("payload_erased");
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(await t.server.ctx.prisma.item.count({ where: { companyId: t.companyId } })).toBe(before);
  });

  it("records the deletion in the audit log: the API key, the short_id, no field values", async () => {
    const item = await newItem({ name: "Audited name", metadata: { email: "audited@example.com" } });
    expect((await del(item.item_id)).status).toBe(204);
    const entry = await t.server.ctx.prisma.auditEvent.findFirstOrThrow({ where: { action: "item.deleted", targetId: item.item_id } });
    expect(entry).toMatchObject({ companyId: t.companyId, actorType: "api_key", actorId: t.keyId, targetType: "item", targetLabel: item.short_id, details: {} });
    expect(JSON.stringify(entry)).not.toMatch(/Audited name|audited@example/);
  });

  describe("races", () => {
    it("two concurrent deletes: one 204, one 404; one item.deleted", async () => {
      for (let i = 0; i < 5; i++) {
        const item = await newItem();
        const results = await Promise.all([del(item.item_id), del(item.item_id)]);
        expect(results.map((r) => r.status).sort()).toEqual([204, 404]);
        expect((await eventsOf(item.item_id)).filter((e) => e.type === "item.deleted")).toHaveLength(1);
      }
    });

    it("a PATCH racing a DELETE: either the update lands first (and is erased) or it is 404; never an update after the delete", async () => {
      for (let i = 0; i < 5; i++) {
        const item = await newItem({ name: "Race" });
        const [patch, remove] = await Promise.all([api("PATCH", `/v1/ext/items/${item.item_id}`, { name: `Race ${i}` }), del(item.item_id)]);
        expect(remove.status).toBe(204);
        expect([200, 404]).toContain(patch.status);
        const events = await eventsOf(item.item_id);
        expect(events[events.length - 1]!.type).toBe("item.deleted");
        for (const e of events) expect(JSON.stringify(e.payload)).not.toContain(`Race ${i}`);
      }
    });

    it("a task create racing a DELETE: linked and then unlinked, or refused with 422", async () => {
      for (let i = 0; i < 5; i++) {
        const item = await newItem();
        const [task, remove] = await Promise.all([
          api("POST", "/v1/ext/tasks", { title: "Race", due_at: "2026-12-01T09:00:00Z", assigned_to: "ada", item_id: item.item_id }),
          del(item.item_id),
        ]);
        expect(remove.status).toBe(204);
        if (task.status === 201) expect((await api("GET", `/v1/ext/tasks/${task.body.task_id}`)).body.item_id).toBeNull();
        else expect(task.status).toBe(422);
      }
    });
  });

  describe("as an attacker", () => {
    it("another company's item id is 404 and stays untouched", async () => {
      const other = await t.newCompany("Victim Co");
      const res = await t.request(
        "POST",
        "/v1/ext/items",
        { name: "Victim", pipeline_id: other.pipeline.id, stage_id: other.pipeline.stages[0]!.id },
        other.apiKey,
      );
      expect(res.status).toBe(201);
      const attempt = await del(res.body.item_id);
      expect(attempt.status).toBe(404);
      expect((await t.request("GET", `/v1/ext/items/${res.body.item_id}`, undefined, other.apiKey)).status).toBe(200);
    });

    it("a read-only key is 403 and deletes nothing", async () => {
      const item = await newItem();
      const { key } = await t.newKey(["items:read"]);
      const res = await del(item.item_id, "", key);
      expect(res.status).toBe(403);
      expect((await api("GET", `/v1/ext/items/${item.item_id}`)).status).toBe(200);
    });

    it("an unknown or oversized id is 404 or 400, never 500", async () => {
      expect((await del("no-such-item")).status).toBe(404);
      expect([400, 404]).toContain((await del("x".repeat(300))).status);
    });
  });
});
