/**
 * Issue 30 through @stageline/client, end to end: a script against a real server (real HTTP, a fresh database:
 * PGlite, or PostgreSQL with TEST_DATABASE_URL) adds, lists, pages, updates and deletes notes, assigns a task to a user
 * it found with `users.iterate`, and verifies a real signed `note.created` delivery with `verifyWebhook`, typed by
 * `WebhookEventPayloads`. Another company's note is a NotFoundError, its item a ValidationError.
 */
import { ConflictError, NotFoundError, Stageline, ValidationError, verifyWebhook, type Note, type User, type WebhookEventPayloads } from "../../client/src";
import { startReceiver, type Receiver } from "../../server/test/helpers/receiver";
import { startTestServer, type TestServer } from "../../server/test/helpers/test-server";

let t: TestServer;
let receiver: Receiver;
let client: Stageline;
let itemId: string;

beforeAll(async () => {
  t = await startTestServer();
  receiver = await startReceiver();
  client = new Stageline({ apiKey: t.apiKey, baseUrl: t.url });
  const prisma = t.server.ctx.prisma;
  // console users of the company (one with a display name, one without) and one of another company
  await prisma.user.create({ data: { companyId: t.companyId, email: "zoe@acme.example", role: "member", passwordHash: "x" } });
  await prisma.user.create({ data: { companyId: t.companyId, email: "ada@acme.example", name: "Ada Lovelace", role: "owner", passwordHash: "x" } });
  const other = await t.newCompany("Other Co");
  await prisma.user.create({ data: { companyId: other.companyId, email: "eve@other.example", role: "owner", passwordHash: "x" } });
  const item = await client.items.create({ name: "Notes deal", pipeline_id: t.pipeline.id, stage_id: t.pipeline.stages[0]!.id, metadata: { email: "deal@example.com" } });
  itemId = item.item_id;
});

afterAll(async () => {
  await receiver?.close();
  await t?.close();
});

describe("notes through the client", () => {
  it("create (Markdown kept, idempotent), list and iterate newest first, get, update with version, delete", async () => {
    const body = "  **Call** with Ada\n\n- annual billing\n";
    const first = await client.notes.create({ item_id: itemId, body, pinned: true }, { idempotencyKey: "e2e-note-1" });
    expect(first).toMatchObject({ item_id: itemId, body, pinned: true, version: 1 });
    const replay = await client.notes.create({ item_id: itemId, body, pinned: true }, { idempotencyKey: "e2e-note-1" });
    expect(replay.note_id).toBe(first.note_id);
    const second = await client.notes.create({ item_id: itemId, body: "Second" });
    expect(second.pinned).toBe(false);

    const page = await client.notes.list({ item_id: itemId, limit: 1 });
    expect(page.data.map((n) => n.note_id)).toEqual([second.note_id]);
    expect(page.nextCursor).toEqual(expect.any(String));
    const all: Note[] = [];
    for await (const note of client.notes.iterate({ item_id: itemId, limit: 1 })) all.push(note);
    expect(all.map((n) => n.note_id)).toEqual([second.note_id, first.note_id]);
    expect((await client.notes.list({ item_id: itemId, pinned: "true" })).data.map((n) => n.note_id)).toEqual([first.note_id]);

    expect(await client.notes.get(first.note_id)).toEqual(first);
    const updated = await client.notes.update(first.note_id, { pinned: false, version: 1 });
    expect(updated).toMatchObject({ pinned: false, version: 2, body });
    const stale = await client.notes.update(first.note_id, { body: "x", version: 1 }).catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(ConflictError);
    expect((stale as ConflictError).currentVersion).toBe(2);

    await client.notes.delete(second.note_id);
    await expect(client.notes.get(second.note_id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.notes.delete(second.note_id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it("another company's note is not found and its item cannot take a note", async () => {
    const other = await t.newCompany("Third Co");
    const theirs = new Stageline({ apiKey: other.apiKey, baseUrl: t.url });
    const theirItem = await theirs.items.create({ name: "Theirs", pipeline_id: other.pipeline.id, stage_id: other.pipeline.stages[0]!.id, metadata: { email: "t@example.com" } });
    const theirNote = await theirs.notes.create({ item_id: theirItem.item_id, body: "private" });
    await expect(client.notes.get(theirNote.note_id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.notes.update(theirNote.note_id, { pinned: true })).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.notes.create({ item_id: theirItem.item_id, body: "x" })).rejects.toBeInstanceOf(ValidationError);
  });

  it("a note.created delivery verifies and is typed as a Note; the sample is a Note", async () => {
    const sub = await client.webhooks.subscribe({ target_url: `${receiver.url}/notes`, event: "note.created" });
    const note = await client.notes.create({ item_id: itemId, body: "Delivered" });
    await receiver.waitFor(() => receiver.requests.some((r) => r.path === "/notes"), "the note.created delivery", 10_000);
    const delivery = receiver.requests.find((r) => r.path === "/notes")!;
    const verified = verifyWebhook<WebhookEventPayloads["note.created"]>(delivery.body, delivery.headers, sub.secret);
    expect(verified.event).toBe("note.created");
    expect(verified.data).toEqual(note);
    await client.webhooks.unsubscribe(sub.id);
    const sample: Note = await client.webhooks.sample("notes");
    expect(sample).toMatchObject({ note_id: expect.any(String), body: expect.any(String), version: 1 });
  });
});

describe("users through the client", () => {
  it("lists the company's users by name (unnamed last), pages, and a task assigned to one names them", async () => {
    const users: User[] = [];
    for await (const user of client.users.iterate({ limit: 1 })) users.push(user);
    expect(users.map((u) => [u.name, u.email])).toEqual([
      ["Ada Lovelace", "ada@acme.example"],
      [null, "zoe@acme.example"],
    ]);
    const ada = users[0]!;
    const task = await client.tasks.create({ title: "Send the quote", due_at: "2026-12-01T10:00:00Z", assigned_to: ada.user_id });
    expect(task.assignee).toEqual(ada);
    const free = await client.tasks.create({ title: "Send the quote", due_at: "2026-12-01T10:00:00Z", assigned_to: "partner@elsewhere.example" });
    expect(free.assignee).toBeNull();
  });
});
