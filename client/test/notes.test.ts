/**
 * CONTRACT "Client library" + "Notes": `notes.list` / `iterate` / `get` / `create` / `update` / `delete` (paths,
 * queries, bodies, Idempotency-Key on create, what is retried and what is sent once) and `webhooks.sample("notes")`;
 * the note event bodies are typed in webhook-events.test.ts.
 */
import type { Note } from "../src";
import { api, client, ORIGIN, problem, recordingKey, useNock, useVirtualClock } from "./helpers/setup";

useNock();
useVirtualClock();

const PROBLEM = { "content-type": "application/problem+json" };

const note = (id: string, extra: Partial<Note> = {}): Note => ({
  note_id: id,
  item_id: "i1",
  body: `Note ${id}: **bold**`,
  pinned: false,
  created_by: "k1",
  created_at: "2026-03-02T10:15:00.000Z",
  updated_at: "2026-03-02T10:15:00.000Z",
  version: 1,
  ...extra,
});

describe("notes", () => {
  it("list sends the filters and returns one page with its next cursor; iterate follows the pages lazily", async () => {
    api()
      .get("/v1/ext/notes")
      .query({ item_id: "i1", pinned: "true", updated_after: "2026-03-01T00:00:00Z", limit: "1" })
      .reply(200, [note("n2", { pinned: true })], { Link: `<${ORIGIN}/v1/ext/notes?item_id=i1&limit=1&cursor=n%3D2>; rel="next"` });
    await expect(client().notes.list({ item_id: "i1", pinned: "true", updated_after: "2026-03-01T00:00:00Z", limit: 1 })).resolves.toEqual({
      data: [note("n2", { pinned: true })],
      nextCursor: "n=2",
    });

    const first = api().get("/v1/ext/notes").query({ item_id: "i1" }).reply(200, [note("n2")], { Link: `<${ORIGIN}/v1/ext/notes?item_id=i1&cursor=c2>; rel="next"` });
    const second = api().get("/v1/ext/notes").query({ item_id: "i1", cursor: "c2" }).reply(200, [note("n1")]);
    const it = client().notes.iterate({ item_id: "i1" });
    expect(first.isDone()).toBe(false);
    expect((await it.next()).value).toEqual(note("n2"));
    expect(second.isDone()).toBe(false);
    expect((await it.next()).value).toEqual(note("n1"));
    expect(await it.next()).toEqual({ done: true, value: undefined });
  });

  it("get percent-encodes the id; another company's note is a NotFoundError", async () => {
    api().get("/v1/ext/notes/a%2Fb").reply(200, note("a/b"));
    await expect(client().notes.get("a/b")).resolves.toEqual(note("a/b"));
    api().get("/v1/ext/notes/other").reply(404, problem(404, "not_found"), PROBLEM);
    await expect(client().notes.get("other")).rejects.toMatchObject({ name: "NotFoundError", status: 404, code: "not_found" });
  });

  it("create sends a random Idempotency-Key, reused by the retry after a 503; the caller's key when given", async () => {
    const keys: string[] = [];
    const body = { item_id: "i1", body: "  Markdown *as written*\n", pinned: true };
    api()
      .post("/v1/ext/notes", body)
      .reply(recordingKey(keys, 503, problem(503, "internal"), PROBLEM))
      .post("/v1/ext/notes", body)
      .reply(recordingKey(keys, 201, note("n1", { body: body.body, pinned: true }), { Location: "/v1/ext/notes/n1" }));
    await expect(client().notes.create(body)).resolves.toMatchObject({ note_id: "n1", pinned: true, body: body.body });
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);

    api().post("/v1/ext/notes").reply(recordingKey(keys, 201, note("n2")));
    await client().notes.create({ item_id: "i1", body: "x" }, { idempotencyKey: "crm-note-17" });
    expect(keys[2]).toBe("crm-note-17");
  });

  it("create: an item of another company is a ValidationError (422 invalid_reference) with its field errors", async () => {
    api()
      .post("/v1/ext/notes")
      .reply(422, problem(422, "invalid_reference", { errors: [{ field: "item_id", message: "No such item." }] }), PROBLEM);
    await expect(client().notes.create({ item_id: "elsewhere", body: "x" })).rejects.toMatchObject({
      name: "ValidationError",
      status: 422,
      code: "invalid_reference",
      errors: [{ field: "item_id", message: "No such item." }],
    });
  });

  it("update sends the body once (no retry after a 503); a stale version is a ConflictError with currentVersion", async () => {
    api().patch("/v1/ext/notes/n1", { pinned: true, version: 1 }).reply(200, note("n1", { pinned: true, version: 2 }));
    await expect(client().notes.update("n1", { pinned: true, version: 1 })).resolves.toMatchObject({ pinned: true, version: 2 });
    api().patch("/v1/ext/notes/n1").once().reply(503, problem(503, "internal"), PROBLEM);
    await expect(client().notes.update("n1", { body: "x" })).rejects.toMatchObject({ name: "ServerError", status: 503 });
    api().patch("/v1/ext/notes/n1").reply(409, problem(409, "version_conflict", { current_version: 4 }), PROBLEM);
    await expect(client().notes.update("n1", { body: "x", version: 2 })).rejects.toMatchObject({ name: "ConflictError", currentVersion: 4 });
  });

  it("delete: the version as a query parameter only when given, void on 204, sent once", async () => {
    api().delete("/v1/ext/notes/n1").query({ version: "3" }).reply(204).delete("/v1/ext/notes/n2").reply(204).delete("/v1/ext/notes/n3").once().reply(503);
    const c = client();
    await expect(c.notes.delete("n1", { version: 3 })).resolves.toBeUndefined();
    await expect(c.notes.delete("n2")).resolves.toBeUndefined();
    await expect(c.notes.delete("n3")).rejects.toMatchObject({ status: 503 });
  });

  it("an empty or blank id rejects with TypeError and sends nothing", async () => {
    const c = client();
    for (const call of [() => c.notes.get(""), () => c.notes.update(" ", { pinned: true }), () => c.notes.delete("\t")]) {
      await expect(call()).rejects.toBeInstanceOf(TypeError);
    }
  });
});

describe("note events", () => {
  it("webhooks.sample('notes') reads the note sample", async () => {
    api().get("/v1/ext/webhooks/sample/notes").reply(200, note("sample"));
    const sample: Note = await client().webhooks.sample("notes");
    expect(sample.note_id).toBe("sample");
  });
});
