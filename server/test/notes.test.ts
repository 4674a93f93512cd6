/**
 * CONTRACT "Notes": the notes API (list with filters and keyset pages, get, create with Idempotency-Key, update with
 * version locking, delete with optional ?version=), its bounds and errors, tenant isolation, and the note events
 * (`note.created`, `note.updated` with `changed_fields`/`previous`, `note.deleted`) with their subscription filters.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { NOTE_BODY_MAX, NoteChangedEventSchema, NoteDeletedEventSchema, NoteSchema } from "@stageline/shared";
import { createSalesPipeline, startTestServer, type TestPipeline, type TestServer } from "./helpers/test-server";

describe("notes", () => {
  let t: TestServer;
  let key: string;
  let item: string;
  let receiver: http.Server;
  let target: string;
  beforeAll(async () => {
    t = await startTestServer();
    key = (await t.newKey(["items:read", "items:write", "hooks:manage"])).key;
    item = await createItem(t.pipeline);
    receiver = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => res.writeHead(200).end("ok"));
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    target = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  });
  afterAll(async () => {
    await t?.close();
    await new Promise((resolve) => receiver?.close(resolve));
  });
  // A fresh key per test (and per setup block): each stays far below the per-key rate limit of 60 a minute.
  const freshKey = async () => {
    key = (await t.newKey(["items:read", "items:write", "hooks:manage"])).key;
  };
  beforeEach(freshKey);

  async function createItem(pipeline: TestPipeline, k = key): Promise<string> {
    const res = await t.request("POST", "/v1/ext/items", { name: "Deal", pipeline_id: pipeline.id, stage_id: pipeline.stages[0]!.id }, k);
    expect(res.status).toBe(201);
    return res.body.item_id as string;
  }
  async function createNote(extra: Record<string, unknown> = {}, itemId = item) {
    const res = await t.request("POST", "/v1/ext/notes", { item_id: itemId, body: "Called Ada", ...extra }, key);
    expect(res.status).toBe(201);
    return res.body;
  }
  const eventsOf = async (noteId: string) =>
    (await t.server.ctx.prisma.webhookEvent.findMany({ where: { resourceId: noteId }, orderBy: { seq: "asc" } })).map((e) => ({
      type: e.type,
      payload: e.payload as Record<string, unknown>,
    }));
  const problem = (res: { status: number; headers: Headers; body: any }, status: number, code: string) => {
    expect(res.status).toBe(status);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(res.body.code).toBe(code);
  };

  describe("create and get", () => {
    it("answers 201 with the note, a Location that reads it back, pinned false and version 1", async () => {
      const res = await t.request("POST", "/v1/ext/notes", { item_id: item, body: "  **Markdown** kept as written\n" }, key);
      expect(res.status).toBe(201);
      expect(NoteSchema.strict().parse(res.body)).toEqual(res.body);
      expect(res.body).toMatchObject({ item_id: item, body: "  **Markdown** kept as written\n", pinned: false, version: 1 });
      expect(res.body.created_at).toBe(res.body.updated_at);
      expect(res.headers.get("location")).toBe(`/v1/ext/notes/${res.body.note_id}`);
      const again = await t.request("GET", res.headers.get("location")!, undefined, key);
      expect(again.status).toBe(200);
      expect(again.body).toEqual(res.body);
    });

    it("records created_by as the creating API key's id", async () => {
      const k = await t.newKey(["items:write"]);
      const res = await t.request("POST", "/v1/ext/notes", { item_id: item, body: "x", pinned: true }, k.key);
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ created_by: k.id, pinned: true });
    });

    it("accepts a body of exactly 65,536 characters and refuses 65,537", async () => {
      const ok = await t.request("POST", "/v1/ext/notes", { item_id: item, body: "a".repeat(NOTE_BODY_MAX) }, key);
      expect(ok.status).toBe(201);
      expect(ok.body.body).toHaveLength(NOTE_BODY_MAX);
      const long = await t.request("POST", "/v1/ext/notes", { item_id: item, body: "a".repeat(NOTE_BODY_MAX + 1) }, key);
      problem(long, 400, "validation_failed");
      expect(long.body.errors.map((e: { path: string }) => e.path)).toEqual(["body"]);
    });

    it("refuses NUL, an empty body, a body of only white space, a missing body and unknown fields", async () => {
      for (const body of [{ body: "a\u0000b" }, { body: "" }, { body: " \n\t " }, {}, { body: "x", colour: "red" }, { body: 42 }]) {
        const res = await t.request("POST", "/v1/ext/notes", { item_id: item, ...body }, key);
        problem(res, 400, "validation_failed");
      }
      problem(await t.request("POST", "/v1/ext/notes", { body: "no item" }, key), 400, "validation_failed");
    });

    it("answers 422 invalid_reference for an unknown item and for another company's item", async () => {
      const other = await t.newCompany("Note Other Co");
      const theirs = await createItem(other.pipeline, other.apiKey);
      for (const itemId of ["no-such-item", theirs]) {
        const res = await t.request("POST", "/v1/ext/notes", { item_id: itemId, body: "x" }, key);
        problem(res, 422, "invalid_reference");
        expect(res.body.errors).toEqual([{ path: "item_id", message: expect.stringContaining(itemId) }]);
      }
    });

    it("replays an idempotent create: same response, one note, one event", async () => {
      const headers = { "Idempotency-Key": `note-${Math.random()}` };
      const first = await t.request("POST", "/v1/ext/notes", { item_id: item, body: "Once" }, key, headers);
      const again = await t.request("POST", "/v1/ext/notes", { item_id: item, body: "Once" }, key, headers);
      expect(first.status).toBe(201);
      expect(again.status).toBe(201);
      expect(again.body).toEqual(first.body);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(again.headers.get("location")).toBe(first.headers.get("location"));
      expect(await t.server.ctx.prisma.note.count({ where: { body: "Once" } })).toBe(1);
      expect((await eventsOf(first.body.note_id)).map((e) => e.type)).toEqual(["note.created"]);
      problem(await t.request("POST", "/v1/ext/notes", { item_id: item, body: "Other" }, key, headers), 422, "idempotency_key_reused");
    });

    it("needs items:write to write and items:read to read", async () => {
      const note = await createNote();
      const readOnly = (await t.newKey(["items:read"])).key;
      const tasksOnly = (await t.newKey(["tasks:read", "tasks:write"])).key;
      problem(await t.request("POST", "/v1/ext/notes", { item_id: item, body: "x" }, readOnly), 403, "insufficient_scope");
      problem(await t.request("PATCH", `/v1/ext/notes/${note.note_id}`, { pinned: true }, readOnly), 403, "insufficient_scope");
      problem(await t.request("DELETE", `/v1/ext/notes/${note.note_id}`, undefined, readOnly), 403, "insufficient_scope");
      expect((await t.request("GET", `/v1/ext/notes/${note.note_id}`, undefined, readOnly)).status).toBe(200);
      problem(await t.request("GET", `/v1/ext/notes/${note.note_id}`, undefined, tasksOnly), 403, "insufficient_scope");
      problem(await t.request("GET", "/v1/ext/notes", undefined, tasksOnly), 403, "insufficient_scope");
    });
  });

  describe("another company", () => {
    it("sees no note of ours: 404 on get, patch and delete, nothing in its list, and the note is untouched", async () => {
      const note = await createNote({ body: "Ours" });
      const other = await t.newCompany("Note Snoop Co");
      const otherKey = other.apiKey;
      for (const [method, body] of [["GET", undefined], ["PATCH", { body: "Theirs" }], ["DELETE", undefined]] as const) {
        const res = await t.request(method, `/v1/ext/notes/${note.note_id}`, body, otherKey);
        problem(res, 404, "not_found");
      }
      const list = await t.request("GET", `/v1/ext/notes?item_id=${item}`, undefined, otherKey);
      expect(list.status).toBe(200);
      expect(list.body).toEqual([]);
      expect((await t.request("GET", `/v1/ext/notes/${note.note_id}`, undefined, key)).body).toEqual(note);
    });

    it("answers 404 for an unknown note id", async () => {
      problem(await t.request("GET", "/v1/ext/notes/no-such-note", undefined, key), 404, "not_found");
      problem(await t.request("PATCH", "/v1/ext/notes/no-such-note", { pinned: true }, key), 404, "not_found");
      problem(await t.request("DELETE", "/v1/ext/notes/no-such-note", undefined, key), 404, "not_found");
    });
  });

  describe("update", () => {
    it("changes body and pinned, bumps version and updated_at, and emits note.updated with changed_fields and previous", async () => {
      const note = await createNote({ body: "Before" });
      const res = await t.request("PATCH", `/v1/ext/notes/${note.note_id}`, { body: "After", pinned: true, version: 1 }, key);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ note_id: note.note_id, item_id: item, body: "After", pinned: true, version: 2, created_at: note.created_at });
      expect(Date.parse(res.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(note.updated_at));
      const events = await eventsOf(note.note_id);
      expect(events.map((e) => e.type)).toEqual(["note.created", "note.updated"]);
      expect(events[0]!.payload).toEqual(note);
      expect(NoteChangedEventSchema.strict().parse(events[1]!.payload)).toEqual({
        ...res.body,
        changed_fields: ["body", "pinned"],
        previous: { body: "Before", pinned: false },
      });
    });

    it("changes nothing and emits nothing for the same values", async () => {
      const note = await createNote({ body: "Same", pinned: true });
      const res = await t.request("PATCH", `/v1/ext/notes/${note.note_id}`, { body: "Same", pinned: true }, key);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(note);
      expect((await eventsOf(note.note_id)).map((e) => e.type)).toEqual(["note.created"]);
    });

    it("answers 409 version_conflict with current_version for a stale version, and changes nothing", async () => {
      const note = await createNote();
      await t.request("PATCH", `/v1/ext/notes/${note.note_id}`, { pinned: true }, key);
      const res = await t.request("PATCH", `/v1/ext/notes/${note.note_id}`, { body: "Stale", version: 1 }, key);
      problem(res, 409, "version_conflict");
      expect(res.body.current_version).toBe(2);
      expect((await t.request("GET", `/v1/ext/notes/${note.note_id}`, undefined, key)).body.body).toBe("Called Ada");
    });

    it("refuses item_id (a note never moves), an empty patch, a bad version and bad bodies with 400", async () => {
      const note = await createNote();
      const other = await createItem(t.pipeline);
      for (const body of [{ item_id: other }, {}, { version: 1 }, { body: "" }, { body: "a".repeat(NOTE_BODY_MAX + 1) }, { pinned: "yes" }, { version: 0 }, { body: "\u0000" }]) {
        problem(await t.request("PATCH", `/v1/ext/notes/${note.note_id}`, body, key), 400, "validation_failed");
      }
      expect((await t.request("GET", `/v1/ext/notes/${note.note_id}`, undefined, key)).body).toEqual(note);
    });

    it("applies concurrent updates one after the other (no update is lost, versions are consecutive)", async () => {
      const note = await createNote({ body: "0" });
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) => t.request("PATCH", `/v1/ext/notes/${note.note_id}`, { body: `v${i}` }, key)),
      );
      expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
      expect(results.map((r) => r.body.version).sort()).toEqual([2, 3, 4, 5, 6, 7]);
      expect((await eventsOf(note.note_id)).filter((e) => e.type === "note.updated")).toHaveLength(6);
    });
  });

  describe("delete", () => {
    it("answers 204, the note is then 404, and note.deleted carries its last state plus deleted_at", async () => {
      const note = await createNote({ body: "Bye" });
      const res = await t.request("DELETE", `/v1/ext/notes/${note.note_id}`, undefined, key);
      expect(res.status).toBe(204);
      problem(await t.request("GET", `/v1/ext/notes/${note.note_id}`, undefined, key), 404, "not_found");
      problem(await t.request("DELETE", `/v1/ext/notes/${note.note_id}`, undefined, key), 404, "not_found");
      const events = await eventsOf(note.note_id);
      expect(events.map((e) => e.type)).toEqual(["note.created", "note.deleted"]);
      // No subscription received them: every body is erased at once.
      for (const e of events) expect(e.payload).toEqual({ note_id: note.note_id, item_id: item, erased: true });
    });

    it("keeps note.deleted's body while a delivery is pending, and erases it once none is", async () => {
      const sub = await t.request("POST", "/v1/ext/webhooks", { target_url: "http://127.0.0.1:9/unreachable", event: "note.deleted" }, key);
      expect(sub.status).toBe(201);
      try {
        const note = await createNote({ body: "Tracked" });
        expect((await t.request("DELETE", `/v1/ext/notes/${note.note_id}`, undefined, key)).status).toBe(204);
        const deleted = (await eventsOf(note.note_id)).find((e) => e.type === "note.deleted")!;
        const body = NoteDeletedEventSchema.strict().parse(deleted.payload);
        expect(body).toEqual({ ...note, deleted_at: expect.any(String) });
        // Its delivery goes with the subscription: nothing is pending any more, so the body is erased.
        expect((await t.request("DELETE", `/v1/ext/webhooks/${sub.body.id}`, undefined, key)).status).toBe(204);
        const after = (await eventsOf(note.note_id)).find((e) => e.type === "note.deleted")!;
        expect(after.payload).toEqual({ note_id: note.note_id, item_id: item, erased: true });
      } finally {
        await t.request("DELETE", `/v1/ext/webhooks/${sub.body.id}`, undefined, key);
      }
    });

    it("answers 409 for a stale ?version= and 204 for the current one", async () => {
      const note = await createNote();
      await t.request("PATCH", `/v1/ext/notes/${note.note_id}`, { pinned: true }, key);
      const stale = await t.request("DELETE", `/v1/ext/notes/${note.note_id}?version=1`, undefined, key);
      problem(stale, 409, "version_conflict");
      expect(stale.body.current_version).toBe(2);
      problem(await t.request("DELETE", `/v1/ext/notes/${note.note_id}?version=zero`, undefined, key), 400, "validation_failed");
      expect((await t.request("DELETE", `/v1/ext/notes/${note.note_id}?version=2`, undefined, key)).status).toBe(204);
    });

    it("refuses a body on DELETE", async () => {
      const note = await createNote();
      const res = await t.request("DELETE", `/v1/ext/notes/${note.note_id}`, { version: 1 }, key);
      expect(res.status).toBe(400);
    });

    it("erases the stored Idempotency-Key response of the deleted note's create (replayed as 410 payload_erased)", async () => {
      const headers = { "Idempotency-Key": `note-erase-${Math.random()}` };
      const first = await t.request("POST", "/v1/ext/notes", { item_id: item, body: "Secret plan" }, key, headers);
      expect((await t.request("DELETE", `/v1/ext/notes/${first.body.note_id}`, undefined, key)).status).toBe(204);
      const again = await t.request("POST", "/v1/ext/notes", { item_id: item, body: "Secret plan" }, key, headers);
      problem(again, 410, "payload_erased");
      expect(JSON.stringify(again.body)).not.toContain("Secret plan");
    });
  });

  describe("list", () => {
    let listItem: string;
    const ids: string[] = [];
    beforeAll(async () => {
      await freshKey();
      listItem = await createItem(t.pipeline);
      for (let i = 0; i < 5; i++) ids.push((await createNote({ body: `n${i}`, pinned: i % 2 === 0 }, listItem)).note_id);
    });

    it("lists one item's notes newest first", async () => {
      const res = await t.request("GET", `/v1/ext/notes?item_id=${listItem}`, undefined, key);
      expect(res.status).toBe(200);
      expect(res.body.map((n: { note_id: string }) => n.note_id)).toEqual([...ids].reverse());
      for (const n of res.body) expect(NoteSchema.strict().parse(n)).toEqual(n);
    });

    it("pages with a keyset cursor in the Link header until the end", async () => {
      const seen: string[] = [];
      let url: string | null = `/v1/ext/notes?item_id=${listItem}&limit=2`;
      let pages = 0;
      while (url) {
        const res = await t.request("GET", url, undefined, key);
        expect(res.status).toBe(200);
        seen.push(...res.body.map((n: { note_id: string }) => n.note_id));
        const link = res.headers.get("link");
        url = link ? new URL(/<([^>]+)>/.exec(link)![1]!, t.url).pathname + new URL(/<([^>]+)>/.exec(link)![1]!, t.url).search : null;
        pages++;
      }
      expect(pages).toBe(3);
      expect(seen).toEqual([...ids].reverse());
    });

    it("filters by pinned and updated_after (strictly after), combined with AND", async () => {
      const pinned = await t.request("GET", `/v1/ext/notes?item_id=${listItem}&pinned=true`, undefined, key);
      expect(pinned.body.map((n: { note_id: string }) => n.note_id)).toEqual([ids[4], ids[2], ids[0]]);
      const unpinned = await t.request("GET", `/v1/ext/notes?item_id=${listItem}&pinned=false`, undefined, key);
      expect(unpinned.body.map((n: { note_id: string }) => n.note_id)).toEqual([ids[3], ids[1]]);
      const last = (await t.request("GET", `/v1/ext/notes/${ids[4]}`, undefined, key)).body;
      const after = await t.request("GET", `/v1/ext/notes?item_id=${listItem}&updated_after=${encodeURIComponent(last.updated_at)}`, undefined, key);
      expect(after.body).toEqual([]);
      const touched = await t.request("PATCH", `/v1/ext/notes/${ids[1]}`, { body: "touched" }, key);
      await new Promise((r) => setTimeout(r, 5));
      const since = await t.request(
        "GET",
        `/v1/ext/notes?item_id=${listItem}&updated_after=${encodeURIComponent(new Date(Date.parse(touched.body.updated_at) - 1).toISOString())}`,
        undefined,
        key,
      );
      expect(since.body.map((n: { note_id: string }) => n.note_id)).toEqual([ids[1]]);
    });

    it("lists every note of the company without item_id, and nothing for an unknown item", async () => {
      const all = await t.request("GET", "/v1/ext/notes?limit=500", undefined, key);
      expect(all.body.length).toBeGreaterThanOrEqual(5);
      const none = await t.request("GET", "/v1/ext/notes?item_id=no-such-item", undefined, key);
      expect(none.status).toBe(200);
      expect(none.body).toEqual([]);
    });

    it("refuses bad filters, limits and cursors with 400", async () => {
      for (const q of ["pinned=yes", "updated_after=yesterday", "limit=0", "limit=501", "cursor=garbage", "item_id=%00"]) {
        problem(await t.request("GET", `/v1/ext/notes?${q}`, undefined, key), 400, "validation_failed");
      }
    });
  });

  describe("events and filters", () => {
    let support: TestPipeline;
    beforeAll(async () => {
      await freshKey();
      support = await createSalesPipeline(t.server, t.companyId, "Support notes");
    });
    const subscribed = async (event: string, filter?: unknown) => {
      const res = await t.request("POST", "/v1/ext/webhooks", { target_url: target, event, ...(filter ? { filter } : {}) }, key);
      expect(res.status).toBe(201);
      return res.body.id as string;
    };
    const deliveries = (subscriptionId: string) => t.server.ctx.prisma.webhookDelivery.count({ where: { subscriptionId } });

    it("subscribes to the note events and rejects fields of another resource or stage_id", async () => {
      for (const event of ["note.created", "note.updated", "note.deleted"]) await subscribed(event);
      const bad = await t.request("POST", "/v1/ext/webhooks", { target_url: target, event: "note.updated", filter: { fields: ["name"] } }, key);
      problem(bad, 422, "invalid_reference");
      expect(bad.body.errors[0].message).toContain("body, pinned");
      const fieldsOnCreated = await t.request("POST", "/v1/ext/webhooks", { target_url: target, event: "note.created", filter: { fields: ["body"] } }, key);
      problem(fieldsOnCreated, 400, "validation_failed");
      const stage = await t.request(
        "POST",
        "/v1/ext/webhooks",
        { target_url: target, event: "note.created", filter: { pipeline_id: t.pipeline.id, stage_id: t.pipeline.stages[0]!.id } },
        key,
      );
      problem(stage, 400, "validation_failed");
    });

    it("pipeline_id selects notes of items of that pipeline, for create, update and delete", async () => {
      const subs = {
        created: await subscribed("note.created", { pipeline_id: support.id }),
        updated: await subscribed("note.updated", { pipeline_id: support.id }),
        deleted: await subscribed("note.deleted", { pipeline_id: support.id }),
      };
      const salesNote = await createNote({ body: "sales" });
      await t.request("PATCH", `/v1/ext/notes/${salesNote.note_id}`, { pinned: true }, key);
      await t.request("DELETE", `/v1/ext/notes/${salesNote.note_id}`, undefined, key);
      for (const id of Object.values(subs)) expect(await deliveries(id)).toBe(0);
      const supportItem = await createItem(support);
      const supportNote = await createNote({ body: "support" }, supportItem);
      await t.request("PATCH", `/v1/ext/notes/${supportNote.note_id}`, { pinned: true }, key);
      await t.request("DELETE", `/v1/ext/notes/${supportNote.note_id}`, undefined, key);
      for (const id of Object.values(subs)) expect(await deliveries(id)).toBe(1);
    });

    it("fields on note.updated delivers only changes that name one of the fields", async () => {
      const sub = await subscribed("note.updated", { fields: ["pinned"] });
      const note = await createNote();
      await t.request("PATCH", `/v1/ext/notes/${note.note_id}`, { body: "only the body" }, key);
      expect(await deliveries(sub)).toBe(0);
      await t.request("PATCH", `/v1/ext/notes/${note.note_id}`, { pinned: true }, key);
      expect(await deliveries(sub)).toBe(1);
    });
  });

  describe("sample", () => {
    it("answers the note sample and each note event's body; other resources' events are a 400", async () => {
      const plain = await t.request("GET", "/v1/ext/webhooks/sample/notes", undefined, key);
      expect(plain.status).toBe(200);
      expect(NoteSchema.strict().parse(plain.body)).toEqual(plain.body);
      const created = await t.request("GET", "/v1/ext/webhooks/sample/notes?event=note.created", undefined, key);
      expect(NoteSchema.strict().parse(created.body)).toEqual(created.body);
      const updated = await t.request("GET", "/v1/ext/webhooks/sample/notes?event=note.updated", undefined, key);
      expect(NoteChangedEventSchema.strict().parse(updated.body)).toEqual(updated.body);
      const deleted = await t.request("GET", "/v1/ext/webhooks/sample/notes?event=note.deleted", undefined, key);
      expect(NoteDeletedEventSchema.strict().parse(deleted.body)).toEqual(deleted.body);
      problem(await t.request("GET", "/v1/ext/webhooks/sample/notes?event=item.created", undefined, key), 400, "validation_failed");
      problem(await t.request("GET", "/v1/ext/webhooks/sample/items?event=note.created", undefined, key), 400, "validation_failed");
      const itemsRead = (await t.newKey(["items:read"])).key;
      expect((await t.request("GET", "/v1/ext/webhooks/sample/notes", undefined, itemsRead)).status).toBe(200);
      const tasksOnly = (await t.newKey(["tasks:read"])).key;
      problem(await t.request("GET", "/v1/ext/webhooks/sample/notes", undefined, tasksOnly), 403, "insufficient_scope");
    });
  });

  describe("item deletion", () => {
    it("deletes the item's notes with it, erases their events, and lists them in item.deleted's deleted_note_ids", async () => {
      const sub = await t.request("POST", "/v1/ext/webhooks", { target_url: "http://127.0.0.1:9/unreachable", event: "item.deleted" }, key);
      try {
        const doomed = await createItem(t.pipeline);
        const a = await createNote({ body: "first" }, doomed);
        const b = await createNote({ body: "second" }, doomed);
        await t.request("PATCH", `/v1/ext/notes/${a.note_id}`, { body: "first, edited" }, key);
        expect((await t.request("DELETE", `/v1/ext/items/${doomed}`, undefined, key)).status).toBe(204);
        for (const n of [a, b]) problem(await t.request("GET", `/v1/ext/notes/${n.note_id}`, undefined, key), 404, "not_found");
        expect(await t.server.ctx.prisma.note.count({ where: { itemId: doomed } })).toBe(0);
        for (const n of [a, b]) {
          const events = await eventsOf(n.note_id);
          expect(events.map((e) => e.type)).not.toContain("note.deleted");
          for (const e of events) expect(e.payload).toEqual({ note_id: n.note_id, item_id: doomed, erased: true });
        }
        const deleted = (await t.server.ctx.prisma.webhookEvent.findFirst({ where: { resourceId: doomed, type: "item.deleted" } }))!;
        expect((deleted.payload as { deleted_note_ids: string[] }).deleted_note_ids.sort()).toEqual([a.note_id, b.note_id].sort());
      } finally {
        await t.request("DELETE", `/v1/ext/webhooks/${sub.body.id}`, undefined, key);
      }
    });

    it("never leaves a note behind when creates race the item's deletion: each create is 201 (then listed in deleted_note_ids) or 422", async () => {
      const raced = await createItem(t.pipeline);
      const creates = Array.from({ length: 8 }, (_, i) => t.request("POST", "/v1/ext/notes", { item_id: raced, body: `race ${i}` }, key));
      const deletion = t.request("DELETE", `/v1/ext/items/${raced}`, undefined, key);
      const results = await Promise.all(creates);
      expect((await deletion).status).toBe(204);
      for (const r of results) expect([201, 422]).toContain(r.status);
      expect(await t.server.ctx.prisma.note.count({ where: { itemId: raced } })).toBe(0);
      const deleted = (await t.server.ctx.prisma.webhookEvent.findFirst({ where: { resourceId: raced, type: "item.deleted" } }))!;
      const created = results.filter((r) => r.status === 201).map((r) => r.body.note_id as string);
      // Erased at once (no subscription): the ids are checked through the notes' own events, all erased.
      for (const id of created) {
        const events = await eventsOf(id);
        expect(events.map((e) => e.type)).toEqual(["note.created"]);
        expect(events[0]!.payload).toEqual({ note_id: id, item_id: raced, erased: true });
      }
      expect(deleted.erasedAt).not.toBeNull();
    });

    it("gives an item without notes an empty deleted_note_ids", async () => {
      const sub = await t.request("POST", "/v1/ext/webhooks", { target_url: "http://127.0.0.1:9/unreachable", event: "item.deleted" }, key);
      try {
        const bare = await createItem(t.pipeline);
        expect((await t.request("DELETE", `/v1/ext/items/${bare}`, undefined, key)).status).toBe(204);
        const deleted = (await t.server.ctx.prisma.webhookEvent.findFirst({ where: { resourceId: bare, type: "item.deleted" } }))!;
        expect((deleted.payload as { deleted_note_ids: string[] }).deleted_note_ids).toEqual([]);
      } finally {
        await t.request("DELETE", `/v1/ext/webhooks/${sub.body.id}`, undefined, key);
      }
    });
  });

  describe("scale", () => {
    it("reads one item's notes through its own index (item_id, created_at desc, id desc), whatever the company holds", async () => {
      const target = await createItem(t.pipeline);
      const crowd = await createItem(t.pipeline);
      const prisma = t.server.ctx.prisma;
      await prisma.$executeRawUnsafe(
        `INSERT INTO notes (id, company_id, item_id, body, pinned, created_by, created_at, updated_at, version)
         SELECT 'scale-' || g, $1, CASE WHEN g % 1000 = 0 THEN $2 ELSE $3 END, 'Seeded ' || g, false, 'seed',
           now() - g * interval '1 millisecond', now() - g * interval '1 millisecond', 1
         FROM generate_series(1, 20000) AS g`,
        t.companyId,
        target,
        crowd,
      );
      await prisma.$executeRawUnsafe("ANALYZE notes");
      const plan = await prisma.$queryRawUnsafe<unknown[]>(
        `EXPLAIN (FORMAT JSON) SELECT id FROM notes WHERE company_id = $1 AND item_id = $2 ORDER BY created_at DESC, id DESC LIMIT 101`,
        t.companyId,
        target,
      );
      expect(JSON.stringify(plan)).toContain("notes_item_id_created_at_id_idx");
      const res = await t.request("GET", `/v1/ext/notes?item_id=${target}&limit=100`, undefined, key);
      expect(res.status).toBe(200);
      expect(res.body).toHaveLength(20);
      expect(res.headers.get("link")).toBeNull();
    });
  });
});
