/**
 * Outbound webhook endpoints made in the console (services/webhook-endpoints.ts), at the service level on a real
 * server and database: they share the outbox, dispatcher and Standard Webhooks signing with REST hooks, carry
 * several events, pause and resume, reveal and rotate their secret, send a test event, and keep a delivery log
 * with request headers, filtered by outcome and keyset-paginated. Tenant isolation: another company's id is 404.
 */
import { Webhook } from "standardwebhooks";
import { ItemChangedEventSchema, ItemSchema, NoteChangedEventSchema, NoteDeletedEventSchema, NoteSchema, TaskSchema } from "@stageline/shared";
import type { AppContext } from "../src/context";
import { CLI_ACTOR } from "../src/services/audit-log";
import {
  DELIVERY_PAGE_SIZE,
  EndpointInputSchema,
  createEndpoint,
  deleteEndpoint,
  getEndpoint,
  getEndpointDelivery,
  listEndpointDeliveries,
  listEndpoints,
  resendDelivery,
  revealSecret,
  rotateEndpointSecret,
  sendTestEvent,
  setEndpointPaused,
  updateEndpoint,
} from "../src/services/webhook-endpoints";
import { emitEvents, startReceiver, waitUntil, type Receiver } from "./helpers/receiver";
import { startTestServer, type TestServer } from "./helpers/test-server";

process.env.WEBHOOK_RETRY_BASE_MS = "20";
process.env.WEBHOOK_POLL_MS = "60000";

describe("webhook endpoints (console)", () => {
  let t: TestServer;
  let ctx: AppContext;
  let rx: Receiver;
  let n = 0;
  /** A new endpoint of the main company on its own receiver path. */
  const endpoint = async (events: string[] = ["item.created"], description?: string) => {
    const path = `/endpoint/${++n}`;
    const row = await createEndpoint(ctx, by(), EndpointInputSchema.parse({ target_url: rx.url + path, events, description }));
    return { ...row, path };
  };
  /** The main company's manager (the admin CLI as actor). */
  const by = (companyId = t.companyId) => ({ companyId, actor: CLI_ACTOR, ip: "127.0.0.9" });
  const requestsTo = (path: string) => rx.requests.filter((r) => r.path === path);
  const createItem = async (name = "Acme deal") => {
    const p = t.pipeline;
    const res = await t.request("POST", "/v1/ext/items", { name, pipeline_id: p.id, stage_id: p.stages[0]!.id });
    expect(res.status).toBe(201);
    return res.body;
  };

  beforeAll(async () => {
    t = await startTestServer();
    ctx = t.server.ctx;
    rx = await startReceiver();
  });
  afterAll(async () => {
    await t?.close();
    await rx?.close();
  });

  describe("create", () => {
    it("stores a console endpoint with its description and events in catalogue order", async () => {
      const row = await endpoint(["task.completed", "item.created", "item.created"], "CRM sync");
      expect(row).toMatchObject({ origin: "console", description: "CRM sync", events: ["item.created", "task.completed"], pausedAt: null });
      expect(await getEndpoint(ctx, t.companyId, row.id)).toMatchObject({ id: row.id, targetUrl: rx.url + row.path });
    });

    it("refuses an unknown event and a URL the mode does not allow, naming both fields", async () => {
      const input = EndpointInputSchema.parse({ target_url: "ftp://hooks.example.com/x", events: ["item.archived"] });
      await expect(createEndpoint(ctx, by(), input)).rejects.toMatchObject({
        status: 422,
        extras: { errors: [expect.objectContaining({ path: "target_url" }), expect.objectContaining({ path: "events" })] },
      });
    });

    it("needs at least one event (one ticked box posts a string, none posts nothing)", () => {
      expect(EndpointInputSchema.safeParse({ target_url: "https://x.example", events: undefined }).success).toBe(false);
      expect(EndpointInputSchema.parse({ target_url: "https://x.example", events: "item.created" }).events).toEqual(["item.created"]);
    });
  });

  describe("deliveries", () => {
    it("delivers an item created through the API, signed, and logs it with request headers and the response", async () => {
      const ep = await endpoint(["item.created"]);
      rx.respondWith((r) => (r.path === ep.path ? { status: 200, body: "ok ".repeat(600) } : undefined));
      const item = await createItem("Signed deal");
      await rx.waitFor(() => requestsTo(ep.path).length === 1, "the delivery");
      const received = requestsTo(ep.path)[0]!;
      const { secret } = await revealSecret(ctx, t.companyId, "admin", ep.id);
      expect(new Webhook(secret).verify(received.body.toString("utf8"), received.headers)).toEqual(item);

      await waitUntil(async () => (await listEndpointDeliveries(ctx, t.companyId, ep.id)).items[0]?.state === "succeeded", "the log entry");
      const [entry] = (await listEndpointDeliveries(ctx, t.companyId, ep.id)).items;
      expect(entry).toMatchObject({ event: "item.created", attemptCount: 1, lastStatus: 200, lastDurationMs: expect.any(Number) });
      const { delivery: detail } = await getEndpointDelivery(ctx, t.companyId, ep.id, entry!.id);
      expect(detail.event.payload).toEqual(item);
      const [attempt] = detail.attempts;
      expect(attempt!.requestHeaders).toMatchObject({
        "webhook-id": received.headers["webhook-id"],
        "webhook-signature": received.headers["webhook-signature"],
        "x-webhook-event": "item.created",
        "content-type": "application/json",
      });
      expect(JSON.stringify(attempt!.requestHeaders)).not.toContain(secret);
      expect(Buffer.byteLength(attempt!.responseExcerpt!, "utf8")).toBe(1024); // 1,800 bytes answered, 1 KB kept
    });

    it("delivers every event the endpoint subscribes to, and none it does not", async () => {
      const ep = await endpoint(["item.created", "item.updated"]);
      const item = await createItem("Two events");
      expect((await t.request("PATCH", `/v1/ext/items/${item.item_id}`, { name: "Two events, renamed" })).status).toBe(200);
      await t.request("POST", "/v1/ext/tasks", { title: "Not subscribed", due_at: "2027-01-01T00:00:00Z", assigned_to: "u1" });
      await rx.waitFor(() => requestsTo(ep.path).length === 2, "two deliveries");
      expect(requestsTo(ep.path).map((r) => r.headers["x-webhook-event"])).toEqual(["item.created", "item.updated"]);
      expect((await listEndpointDeliveries(ctx, t.companyId, ep.id)).items.map((d) => d.event)).toEqual(["item.updated", "item.created"]);
    });

    it("pages the log with a keyset cursor, newest first", async () => {
      const ep = await endpoint(["item.created"]);
      await emitEvents(ctx, t.companyId, DELIVERY_PAGE_SIZE + 5);
      const first = await listEndpointDeliveries(ctx, t.companyId, ep.id);
      expect(first.items).toHaveLength(DELIVERY_PAGE_SIZE);
      const second = await listEndpointDeliveries(ctx, t.companyId, ep.id, { cursor: first.next! });
      expect(second.items).toHaveLength(5);
      expect(second.next).toBeNull();
      const all = [...first.items, ...second.items];
      expect(new Set(all.map((d) => d.id)).size).toBe(DELIVERY_PAGE_SIZE + 5);
      const times = all.map((d) => d.createdAt.getTime());
      expect(times).toEqual([...times].sort((a, b) => b - a));
    });

    it("filters the log by outcome: delivered, failed, pending", async () => {
      const ep = await endpoint(["item.created"]);
      let answered = 0;
      rx.respondWith((r) => (r.path === ep.path ? { status: answered++ < 3 ? 200 : 400 } : undefined));
      await emitEvents(ctx, t.companyId, 5);
      await rx.waitFor(() => requestsTo(ep.path).length === 5, "five deliveries");
      await waitUntil(async () => (await listEndpointDeliveries(ctx, t.companyId, ep.id, { outcome: "pending" })).items.length === 0, "all recorded");
      const failed = await listEndpointDeliveries(ctx, t.companyId, ep.id, { outcome: "failed" });
      const delivered = await listEndpointDeliveries(ctx, t.companyId, ep.id, { outcome: "delivered" });
      expect(delivered.items.map((d) => [d.state, d.lastStatus])).toEqual(Array(3).fill(["succeeded", 200]));
      expect(failed.items.map((d) => [d.state, d.lastStatus])).toEqual(Array(2).fill(["failed", 400]));
      rx.respondWith(() => undefined);
    });

    it("resends a delivery: it goes out again with the same webhook-id", async () => {
      const ep = await endpoint(["item.created"]);
      await createItem("Resent");
      await rx.waitFor(() => requestsTo(ep.path).length === 1, "the first delivery");
      const [entry] = (await listEndpointDeliveries(ctx, t.companyId, ep.id)).items;
      await resendDelivery(ctx, t.companyId, ep.id, entry!.id);
      await rx.waitFor(() => requestsTo(ep.path).length === 2, "the resent delivery");
      expect(requestsTo(ep.path)[1]!.headers["webhook-id"]).toBe(requestsTo(ep.path)[0]!.headers["webhook-id"]);
    });
  });

  describe("pause and resume", () => {
    it("queues nothing while paused, holds what was queued, and sends it on resume", async () => {
      const ep = await endpoint(["item.created"]);
      await createItem("Before pause");
      await rx.waitFor(() => requestsTo(ep.path).length === 1, "the delivery before the pause");
      const paused = await setEndpointPaused(ctx, by(), ep.id, true);
      expect(paused.pausedAt).toBeInstanceOf(Date);
      await createItem("During pause");
      const [entry] = (await listEndpointDeliveries(ctx, t.companyId, ep.id)).items;
      await resendDelivery(ctx, t.companyId, ep.id, entry!.id); // queued while paused: held
      await new Promise((r) => setTimeout(r, 500));
      expect(requestsTo(ep.path)).toHaveLength(1);
      expect((await listEndpointDeliveries(ctx, t.companyId, ep.id)).items).toHaveLength(1); // no delivery for the paused-time item
      await expect(sendTestEvent(ctx, t.companyId, ep.id)).rejects.toMatchObject({ status: 422 });

      expect((await setEndpointPaused(ctx, by(), ep.id, false)).pausedAt).toBeNull();
      await rx.waitFor(() => requestsTo(ep.path).length === 2, "the held delivery after resume");
      await createItem("After resume");
      await rx.waitFor(() => requestsTo(ep.path).length === 3, "a new delivery after resume");
    });
  });

  describe("secrets", () => {
    it("reveals the secret to an owner or admin, never to a member", async () => {
      const ep = await endpoint();
      const owner = await revealSecret(ctx, t.companyId, "owner", ep.id);
      expect(owner.secret).toMatch(/^whsec_/);
      expect(owner.previousSecret).toBeNull();
      await expect(revealSecret(ctx, t.companyId, "member", ep.id)).rejects.toMatchObject({ status: 403 });
    });

    it("rotates keeping the old secret valid for 24 hours: deliveries verify with either", async () => {
      const ep = await endpoint();
      const before = await revealSecret(ctx, t.companyId, "admin", ep.id);
      await rotateEndpointSecret(ctx, by(), ep.id);
      const rotated = await ctx.prisma.auditEvent.findFirst({ where: { targetId: ep.id, action: "webhook_endpoint.secret_rotated" } });
      expect(JSON.stringify(rotated)).not.toContain(before.secret);
      const after = await revealSecret(ctx, t.companyId, "admin", ep.id);
      expect(after.secret).not.toBe(before.secret);
      expect(after.previousSecret).toBe(before.secret);
      const hours = (after.previousSecretExpiresAt!.getTime() - Date.now()) / 3_600_000;
      expect(hours).toBeGreaterThan(23.9);
      expect(hours).toBeLessThanOrEqual(24);
      await createItem("Rotated");
      await rx.waitFor(() => requestsTo(ep.path).length === 1, "the delivery");
      const r = requestsTo(ep.path)[0]!;
      for (const secret of [before.secret, after.secret]) expect(() => new Webhook(secret).verify(r.body.toString("utf8"), r.headers)).not.toThrow();
    });
  });

  describe("send test event", () => {
    it("delivers a signed sample from the company's blueprint in the format of each event", async () => {
      const ep = await endpoint(["item.created", "item.stage_changed", "task.completed"]);
      const { secret } = await revealSecret(ctx, t.companyId, "admin", ep.id);
      for (const event of ["item.created", "item.stage_changed", "task.completed"]) await sendTestEvent(ctx, t.companyId, ep.id, event);
      await rx.waitFor(() => requestsTo(ep.path).length === 3, "three test deliveries");
      const bodies = requestsTo(ep.path).map((r) => new Webhook(secret).verify(r.body.toString("utf8"), r.headers) as Record<string, unknown>);
      expect(ItemSchema.parse(bodies[0])).toMatchObject({ pipeline: "Sales", email: "jane.doe@example.com", deal_value: 1500 });
      expect(ItemChangedEventSchema.parse(bodies[1]).changed_fields).toEqual(["stage", "status"]);
      TaskSchema.parse(bodies[2]);
      expect(requestsTo(ep.path).map((r) => r.headers["x-webhook-event"])).toEqual(["item.created", "item.stage_changed", "task.completed"]);
      await waitUntil(async () => (await listEndpointDeliveries(ctx, t.companyId, ep.id, { outcome: "delivered" })).items.length === 3, "the log");
    });

    it("delivers the note events' samples in the Note format (CONTRACT \"Notes\")", async () => {
      const ep = await endpoint(["note.created", "note.updated", "note.deleted"]);
      const { secret } = await revealSecret(ctx, t.companyId, "admin", ep.id);
      for (const event of ["note.created", "note.updated", "note.deleted"]) await sendTestEvent(ctx, t.companyId, ep.id, event);
      await rx.waitFor(() => requestsTo(ep.path).length === 3, "three note test deliveries");
      const bodies = requestsTo(ep.path).map((r) => new Webhook(secret).verify(r.body.toString("utf8"), r.headers) as Record<string, unknown>);
      expect(NoteSchema.strict().parse(bodies[0])).toMatchObject({ note_id: "sample_note", item_id: "sample_item" });
      expect(NoteChangedEventSchema.strict().parse(bodies[1]).changed_fields).toEqual(["body", "pinned"]);
      expect(NoteDeletedEventSchema.strict().parse(bodies[2]).deleted_at).toEqual(expect.any(String));
      expect(requestsTo(ep.path).map((r) => r.headers["x-webhook-event"])).toEqual(["note.created", "note.updated", "note.deleted"]);
    });

    it("refuses an event the endpoint does not subscribe to", async () => {
      const ep = await endpoint(["item.created"]);
      await expect(sendTestEvent(ctx, t.companyId, ep.id, "task.created")).rejects.toMatchObject({ status: 422 });
    });
  });

  describe("REST hooks made through the API", () => {
    it("are listed marked as origin api, can be deleted, and cannot be edited, paused, tested or revealed", async () => {
      const hook = (await t.request("POST", "/v1/ext/webhooks", { target_url: `${rx.url}/zap`, event: "item.created" })).body;
      const { items } = await listEndpoints(ctx, t.companyId);
      expect(items.find((e) => e.id === hook.id)).toMatchObject({ origin: "api", events: ["item.created"] });
      const input = EndpointInputSchema.parse({ target_url: `${rx.url}/zap2`, events: ["item.created"] });
      await expect(updateEndpoint(ctx, by(), hook.id, input)).rejects.toMatchObject({ status: 422 });
      await expect(setEndpointPaused(ctx, by(), hook.id, true)).rejects.toMatchObject({ status: 422 });
      await expect(sendTestEvent(ctx, t.companyId, hook.id)).rejects.toMatchObject({ status: 422 });
      await expect(revealSecret(ctx, t.companyId, "owner", hook.id)).rejects.toMatchObject({ status: 422 });
      await deleteEndpoint(ctx, by(), hook.id);
      expect((await t.request("GET", "/v1/ext/webhooks")).body.map((h: { id: string }) => h.id)).not.toContain(hook.id);
    });

    it("see only REST hooks through the API: a console endpoint is not listed and is 404 there", async () => {
      const ep = await endpoint();
      expect((await t.request("GET", "/v1/ext/webhooks")).body.map((h: { id: string }) => h.id)).not.toContain(ep.id);
      expect((await t.request("DELETE", `/v1/ext/webhooks/${ep.id}`)).status).toBe(404);
      expect((await t.request("GET", `/v1/ext/webhooks/${ep.id}/deliveries`)).status).toBe(404);
    });
  });

  describe("edit and delete", () => {
    it("changes URL, description and events, and deletes with its delivery log", async () => {
      const ep = await endpoint(["item.created"], "old");
      const input = EndpointInputSchema.parse({ target_url: `${rx.url}/moved`, description: "new", events: ["task.created"] });
      const { before, after } = await updateEndpoint(ctx, by(), ep.id, input);
      expect(before).toMatchObject({ description: "old", events: ["item.created"] });
      expect(after).toMatchObject({ description: "new", events: ["task.created"], targetUrl: `${rx.url}/moved` });
      await deleteEndpoint(ctx, by(), ep.id);
      await expect(getEndpoint(ctx, t.companyId, ep.id)).rejects.toMatchObject({ status: 404 });
      const events = await ctx.prisma.auditEvent.findMany({ where: { companyId: t.companyId, targetId: ep.id }, orderBy: { createdAt: "asc" } });
      expect(events.map((e) => [e.action, e.ip])).toEqual([
        ["webhook_endpoint.created", "127.0.0.9"],
        ["webhook_endpoint.changed", "127.0.0.9"],
        ["webhook_endpoint.deleted", "127.0.0.9"],
      ]);
      expect(events[1]!.details).toMatchObject({ from: { description: "old" }, to: { description: "new", events: ["task.created"] } });
    });
  });

  describe("tenant isolation", () => {
    it("answers 404 for another company's endpoint in every operation", async () => {
      const ep = await endpoint();
      const other = await t.newCompany("Elsewhere Inc");
      const input = EndpointInputSchema.parse({ target_url: `${rx.url}/x`, events: ["item.created"] });
      const attempts: (() => Promise<unknown>)[] = [
        () => getEndpoint(ctx, other.companyId, ep.id),
        () => updateEndpoint(ctx, by(other.companyId), ep.id, input),
        () => setEndpointPaused(ctx, by(other.companyId), ep.id, true),
        () => deleteEndpoint(ctx, by(other.companyId), ep.id),
        () => revealSecret(ctx, other.companyId, "owner", ep.id),
        () => rotateEndpointSecret(ctx, by(other.companyId), ep.id),
        () => sendTestEvent(ctx, other.companyId, ep.id),
        () => listEndpointDeliveries(ctx, other.companyId, ep.id),
        () => getEndpointDelivery(ctx, other.companyId, ep.id, "x"),
        () => resendDelivery(ctx, other.companyId, ep.id, "x"),
      ];
      for (const attempt of attempts) await expect(attempt()).rejects.toMatchObject({ status: 404 });
      expect((await listEndpoints(ctx, other.companyId)).items).toEqual([]);
      expect(await getEndpoint(ctx, t.companyId, ep.id)).toMatchObject({ pausedAt: null });
    });
  });
});
