/**
 * Erasure that a test can prove (issue 25 item 2; CONTRACT "Item deletion and erasure"). The built server runs as
 * its own process (as `npm start` runs it) at LOG_LEVEL=trace, its whole output captured. An item whose name, custom
 * fields, contact and source hold a unique marker goes through everything that stores copies of it: REST hooks to
 * item.created/updated/stage_changed/deleted and task events with a local receiver that echoes each body back (so
 * the delivery log's response excerpts hold it too), one target failing so a delivery is still pending at the
 * deletion, an update, a stage change, a create with an Idempotency-Key (stored response) and its replay, linked
 * tasks, searches by name. Then the item is deleted, its item.deleted deliveries end, the server stops, and the
 * WHOLE database is dumped: every table of every schema found through the catalog (PGlite and PostgreSQL), and
 * `pg_dump` of the schema on PostgreSQL (when TEST_DATABASE_URL is set). The marker occurs zero times in each dump
 * and in the server's output; a control item's marker, never deleted, is found in the dumps (the dump does read the
 * data). Also: redeliver of an erased delivery is 410 payload_erased, and a replay of the create is 410.
 */
import crypto from "node:crypto";
import { openDatabase } from "../src/db/database";
import { catalogDump, pgDump } from "./helpers/database-dump";
import { startReceiver, type Receiver } from "./helpers/receiver";
import { createServerStore, eventually, killServerProcesses, startServerProcess, type ServerProcess, type ServerStore } from "./helpers/server-process";

jest.setTimeout(120_000);

/**
 * The setup of a describe block: a receiver that echoes every body back (a target that does so puts the body into the
 * delivery log's response excerpts) and answers 503 on `/fail`, and the built server in its own process at
 * LOG_LEVEL=trace on a fresh store, with the demo company's key. `call` sends a request with that key.
 */
function erasureHarness() {
  const h = {} as { store: ServerStore; server: ServerProcess; receiver: Receiver };
  beforeAll(async () => {
    h.receiver = await startReceiver();
    h.receiver.respondWith((req) => ({ status: req.path === "/fail" ? 503 : 200, body: req.body.toString("utf8") }));
    h.store = createServerStore();
    h.server = await startServerProcess(h.store, { LOG_LEVEL: "trace", RATE_LIMIT_PER_MINUTE: "100000" });
    if (!h.server.demoApiKey) throw new Error(`the first start did not seed the demo company:\n${h.server.output()}`);
  });
  afterAll(async () => {
    await killServerProcesses();
    await h.receiver?.close();
    await h.store?.remove();
  });
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(h.server.url + path, {
      method,
      headers: { "x-api-key": h.server.demoApiKey!, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, body: text ? (JSON.parse(text) as any) : undefined };
  };
  const deliveriesOf = async (hookId: string) => (await call("GET", `/v1/ext/webhooks/${hookId}/deliveries`)).body as any[];
  return { h, call, deliveriesOf };
}

describe("item erasure against a whole-database dump", () => {
  const { h, call, deliveriesOf } = erasureHarness();
  const marker = `zq${crypto.randomBytes(8).toString("hex")}`;
  const control = `zc${crypto.randomBytes(8).toString("hex")}`;

  it("leaves the marker nowhere: not in any table of the database, not in pg_dump, not in the server's log", async () => {
    const pipeline = (await call("GET", "/v1/ext/pipelines")).body[0];
    const stages = (await call("GET", `/v1/ext/pipelines/${pipeline.id}/stages`)).body;
    const hooks: Record<string, string> = {};
    for (const [event, path] of [
      ["item.created", "/echo"],
      ["item.updated", "/echo"],
      ["item.deleted", "/echo"],
      ["item.stage_changed", "/fail"],
      ["task.created", "/echo"],
      ["task.updated", "/echo"],
    ] as const) {
      const res = await call("POST", "/v1/ext/webhooks", { target_url: `${h.receiver.url}${path}`, event });
      expect(res.status).toBe(201);
      hooks[event] = res.body.id;
    }
    const create = (name: string, m: string) => ({
      name,
      pipeline_id: pipeline.id,
      stage_id: stages[0].id,
      contact_id: `contact-${m}`,
      source: `source-${m}`,
      metadata: { email: `${m}@example.com`, deal_value: 1200 },
    });
    const idempotencyKey = `erasure-${marker}`.slice(0, 20); // the key itself is the client's, not the item's value
    const created = await call("POST", "/v1/ext/items", create(`Deal ${marker}`, marker), { "idempotency-key": idempotencyKey });
    expect(created.status).toBe(201);
    const itemId = created.body.item_id as string;
    const replay = await call("POST", "/v1/ext/items", create(`Deal ${marker}`, marker), { "idempotency-key": idempotencyKey });
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    // An upsert that updates the item answers 200 without Location: its stored response must be erased too.
    const upsertBody = { ...create(`Deal ${marker}`, marker), metadata: { email: `${marker}@example.com`, deal_value: 1300 } };
    const upsertKey = `erasure-upsert-${marker}`.slice(0, 24);
    const upserted = await call("POST", "/v1/ext/items/upsert", upsertBody, { "idempotency-key": upsertKey });
    expect(upserted.status).toBe(200);
    expect(upserted.headers.get("stageline-upsert")).toBe("updated");
    expect(upserted.body.item_id).toBe(itemId);
    expect((await call("PATCH", `/v1/ext/items/${itemId}`, { name: `Renamed ${marker}`, metadata: { email: `new-${marker}@example.com` } })).status).toBe(200);
    expect((await call("PATCH", `/v1/ext/items/${itemId}`, { stage_id: stages[1].id })).status).toBe(200);
    for (const title of ["Call", "Send proposal"]) {
      expect((await call("POST", "/v1/ext/tasks", { title, due_at: "2027-01-01T09:00:00Z", assigned_to: "ada", item_id: itemId })).status).toBe(201);
    }
    // Searches by the item's values (their URLs are logged: the values must be masked).
    expect((await call("GET", `/v1/ext/items?q=${marker}`)).body).toHaveLength(1);
    expect((await call("GET", `/v1/ext/items?name=${encodeURIComponent(`Renamed ${marker}`)}`)).body).toHaveLength(1);
    expect((await call("POST", "/v1/ext/items/check-duplicates", { pipeline_id: pipeline.id, metadata: { email: `new-${marker}@example.com` } })).body).toHaveLength(1);

    // Deliveries happen (each echoed back), and the stage_changed target keeps failing: that delivery is pending.
    const echoed = (event: string) => h.receiver.accepted("/echo").filter((r) => r.headers["x-webhook-event"] === event).length;
    await h.receiver.waitFor(
      () => echoed("item.created") >= 1 && echoed("item.updated") >= 3 && echoed("task.created") >= 2,
      "item.created, three item.updated and two task.created deliveries",
    );
    expect(h.receiver.accepted("/echo").filter((r) => r.body.toString().includes(marker)).length).toBe(4); // the item's bodies
    await h.receiver.waitFor(() => h.receiver.requests.some((r) => r.path === "/fail"), "a failed item.stage_changed attempt");
    expect((await deliveriesOf(hooks["item.stage_changed"]!))[0].state).toBe("pending");

    expect((await call("DELETE", `/v1/ext/items/${itemId}`)).status).toBe(204);
    await h.receiver.waitFor(() => h.receiver.accepted("/echo").some((r) => r.headers["x-webhook-event"] === "item.deleted"), "the item.deleted delivery");
    await eventually(
      async () => (await deliveriesOf(hooks["item.deleted"]!)).every((d) => d.state === "succeeded"),
      () => "the item.deleted delivery to end",
    );
    await h.receiver.waitFor(() => h.receiver.accepted("/echo").filter((r) => r.headers["x-webhook-event"] === "task.updated").length >= 2, "two task.updated");

    // Through the API: the delivery log holds no body or excerpt with the marker; erased deliveries cannot be resent.
    for (const hookId of Object.values(hooks)) expect(JSON.stringify(await deliveriesOf(hookId))).not.toContain(marker);
    const [createdDelivery] = await deliveriesOf(hooks["item.created"]!);
    expect(createdDelivery.state).toBe("succeeded");
    const erasedCreated = await call("POST", `/v1/ext/webhooks/${hooks["item.created"]}/deliveries/${createdDelivery.id}/redeliver`);
    expect(erasedCreated.status).toBe(410);
    expect(erasedCreated.body.code).toBe("payload_erased");
    const failing = (await deliveriesOf(hooks["item.stage_changed"]!))[0];
    expect(failing.state).toBe("failed");
    expect((await call("POST", `/v1/ext/webhooks/${hooks["item.stage_changed"]}/deliveries/${failing.id}/redeliver`)).status).toBe(410);
    const replayAfter = await call("POST", "/v1/ext/items", create(`Deal ${marker}`, marker), { "idempotency-key": idempotencyKey });
    expect(replayAfter.status).toBe(410);
    expect(replayAfter.text).not.toContain(marker);
    const upsertReplayAfter = await call("POST", "/v1/ext/items/upsert", upsertBody, { "idempotency-key": upsertKey });
    expect(upsertReplayAfter.status).toBe(410);
    expect(upsertReplayAfter.body.code).toBe("payload_erased");
    expect(upsertReplayAfter.headers.get("stageline-upsert")).toBeNull();
    expect(upsertReplayAfter.text).not.toContain(marker);

    // A control item, never deleted: the dumps must find its marker (they do read the data).
    expect((await call("POST", "/v1/ext/items", create(`Deal ${control}`, control))).status).toBe(201);
    await h.server.stop();
    expect(h.server.output()).toContain(itemId); // the log did record the requests (by id)
    expect(h.server.output()).not.toContain(marker);

    const db = await openDatabase({ dataDir: h.store.dataDir, databaseUrl: h.store.databaseUrl });
    try {
      const dump = await catalogDump(db.sql, h.store.databaseUrl ? db.schema : undefined);
      expect(dump.tables.length).toBeGreaterThan(15);
      expect(dump.text).toContain(control);
      expect(dump.text).toContain(itemId); // the erased bodies keep the id
      expect(dump.text.split(marker).length - 1).toBe(0);
    } finally {
      await db.close();
    }
    if (h.store.databaseUrl) {
      const dumped = pgDump(h.store.databaseUrl);
      expect(dumped).toContain(control);
      expect(dumped.split(marker).length - 1).toBe(0);
    }
  });
});

/**
 * CONTRACT "Notes" (erasure covers notes): a marker written only in note bodies, through note events echoed back
 * by a receiver (delivery log excerpts), a pending delivery, an idempotent create and its replay, and an update. One
 * marker's note is deleted; another marker's notes go with their item's deletion. Then the whole database is dumped
 * (and `pg_dump` on PostgreSQL): neither marker is found, nor in the server's log; a control note's marker is.
 */
describe("note erasure against a whole-database dump", () => {
  const { h, call, deliveriesOf } = erasureHarness();
  const noteMarker = `zn${crypto.randomBytes(8).toString("hex")}`;
  const itemNoteMarker = `zi${crypto.randomBytes(8).toString("hex")}`;
  const control = `zc${crypto.randomBytes(8).toString("hex")}`;
  const echoed = (event: string, marker: string) =>
    h.receiver.accepted("/echo").filter((r) => r.headers["x-webhook-event"] === event && r.body.toString().includes(marker)).length;

  it("leaves no note body anywhere after the note is deleted, and after an item with notes is deleted", async () => {
    const pipeline = (await call("GET", "/v1/ext/pipelines")).body[0];
    const stages = (await call("GET", `/v1/ext/pipelines/${pipeline.id}/stages`)).body;
    const newItem = async () => {
      const res = await call("POST", "/v1/ext/items", { name: "Deal", pipeline_id: pipeline.id, stage_id: stages[0].id });
      expect(res.status).toBe(201);
      return res.body.item_id as string;
    };
    const hooks: Record<string, string> = {};
    for (const [event, path] of [
      ["note.created", "/echo"],
      ["note.updated", "/fail"],
      ["note.deleted", "/echo"],
      ["item.deleted", "/echo"],
    ] as const) {
      const res = await call("POST", "/v1/ext/webhooks", { target_url: `${h.receiver.url}${path}`, event });
      expect(res.status).toBe(201);
      hooks[event] = res.body.id;
    }

    // 1. One note, created with an Idempotency-Key (stored response) and replayed, updated (pending delivery), deleted.
    const itemId = await newItem();
    const noteBody = { item_id: itemId, body: `Call about ${noteMarker}` };
    const key = `note-erasure-${crypto.randomBytes(4).toString("hex")}`;
    const created = await call("POST", "/v1/ext/notes", noteBody, { "idempotency-key": key });
    expect(created.status).toBe(201);
    const noteId = created.body.note_id as string;
    expect((await call("POST", "/v1/ext/notes", noteBody, { "idempotency-key": key })).headers.get("idempotent-replayed")).toBe("true");
    expect((await call("PATCH", `/v1/ext/notes/${noteId}`, { body: `Edited ${noteMarker}` })).status).toBe(200);
    expect((await call("GET", `/v1/ext/notes?item_id=${itemId}`)).text).toContain(noteMarker);
    await h.receiver.waitFor(() => echoed("note.created", noteMarker) >= 1, "the note.created delivery");
    await h.receiver.waitFor(() => h.receiver.requests.some((r) => r.path === "/fail"), "a failed note.updated attempt");
    expect((await deliveriesOf(hooks["note.updated"]!))[0].state).toBe("pending");
    expect((await call("DELETE", `/v1/ext/notes/${noteId}`)).status).toBe(204);
    await h.receiver.waitFor(() => echoed("note.deleted", noteMarker) >= 1, "the note.deleted delivery");
    await eventually(
      async () => (await deliveriesOf(hooks["note.deleted"]!)).every((d) => d.state === "succeeded"),
      () => "the note.deleted delivery to end",
    );
    const replayAfter = await call("POST", "/v1/ext/notes", noteBody, { "idempotency-key": key });
    expect(replayAfter.status).toBe(410);
    expect(replayAfter.body.code).toBe("payload_erased");
    expect(replayAfter.text).not.toContain(noteMarker);
    const [createdDelivery] = await deliveriesOf(hooks["note.created"]!);
    const redeliver = await call("POST", `/v1/ext/webhooks/${hooks["note.created"]}/deliveries/${createdDelivery.id}/redeliver`);
    expect(redeliver.status).toBe(410);
    expect((await deliveriesOf(hooks["note.updated"]!))[0].state).toBe("failed");

    // 2. An item with two notes (one created with an Idempotency-Key) is deleted: its notes go, erased, with it.
    const doomed = await newItem();
    const itemKey = `note-item-erasure-${crypto.randomBytes(4).toString("hex")}`;
    const first = await call("POST", "/v1/ext/notes", { item_id: doomed, body: `First ${itemNoteMarker}` }, { "idempotency-key": itemKey });
    const second = await call("POST", "/v1/ext/notes", { item_id: doomed, body: `Second ${itemNoteMarker}`, pinned: true });
    expect([first.status, second.status]).toEqual([201, 201]);
    await h.receiver.waitFor(() => echoed("note.created", itemNoteMarker) >= 2, "two note.created deliveries");
    expect((await call("DELETE", `/v1/ext/items/${doomed}`)).status).toBe(204);
    await h.receiver.waitFor(() => h.receiver.accepted("/echo").some((r) => r.headers["x-webhook-event"] === "item.deleted"), "the item.deleted delivery");
    const itemDeleted = h.receiver.accepted("/echo").find((r) => r.headers["x-webhook-event"] === "item.deleted")!;
    expect(JSON.parse(itemDeleted.body.toString()).deleted_note_ids.sort()).toEqual([first.body.note_id, second.body.note_id].sort());
    expect(h.receiver.accepted("/echo").filter((r) => r.headers["x-webhook-event"] === "note.deleted")).toHaveLength(1); // the first note's only
    for (const note of [first.body, second.body]) expect((await call("GET", `/v1/ext/notes/${note.note_id}`)).status).toBe(404);
    const itemReplay = await call("POST", "/v1/ext/notes", { item_id: doomed, body: `First ${itemNoteMarker}` }, { "idempotency-key": itemKey });
    expect(itemReplay.status).toBe(410);
    expect(itemReplay.text).not.toContain(itemNoteMarker);
    for (const hookId of Object.values(hooks)) {
      const log = JSON.stringify(await deliveriesOf(hookId));
      expect(log).not.toContain(noteMarker);
      expect(log).not.toContain(itemNoteMarker);
    }

    // A control note, never deleted: the dumps must find its marker.
    expect((await call("POST", "/v1/ext/notes", { item_id: itemId, body: `Kept ${control}` })).status).toBe(201);
    await h.server.stop();
    expect(h.server.output()).toContain(noteId); // the log did record the requests (by id)
    for (const marker of [noteMarker, itemNoteMarker]) expect(h.server.output()).not.toContain(marker);

    const db = await openDatabase({ dataDir: h.store.dataDir, databaseUrl: h.store.databaseUrl });
    try {
      const dump = await catalogDump(db.sql, h.store.databaseUrl ? db.schema : undefined);
      expect(dump.text).toContain(control);
      expect(dump.text).toContain(noteId); // the erased bodies keep the id
      expect(dump.text.split(noteMarker).length - 1).toBe(0);
      expect(dump.text.split(itemNoteMarker).length - 1).toBe(0);
    } finally {
      await db.close();
    }
    if (h.store.databaseUrl) {
      const dumped = pgDump(h.store.databaseUrl);
      expect(dumped).toContain(control);
      expect(dumped.split(noteMarker).length - 1).toBe(0);
      expect(dumped.split(itemNoteMarker).length - 1).toBe(0);
    }
  });
});
