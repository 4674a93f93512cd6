/**
 * Notes on the console's item page (issue 30 item 5, CONTRACT "Notes"), over HTTP: the notes shown pinned first, then
 * newest; owners and admins add, edit (at the version they saw), pin and delete (after a confirmation page) through the
 * API's notes service, as themselves (`created_by`), with the API's events and an audit entry without the body;
 * members read only (no controls, 403); CSRF; another company's note or item is 404; stored-XSS payloads in bodies
 * render inert. The browser walk-through with axe-core is in console-notes-browser.test.ts.
 */
import { NOTE_BODY_MAX } from "@stageline/shared";
import { adminAndMemberOverHttp, createItemOverApi, signInOverHttp, type ConsoleHttp, type ConsoleUser } from "./helpers/console-browser";
import { startTestServerWithRateLimit, type TestServer } from "./helpers/test-server";
import { HTML_XSS_PAYLOADS, MARKDOWN_XSS_PAYLOADS, inertnessProblems } from "./helpers/xss-payloads";

let t: TestServer;
let admin: ConsoleHttp;
let member: ConsoleHttp;
let adminUser: ConsoleUser;

const newItem = (name: string, key = t.apiKey, pipeline = t.pipeline) => createItemOverApi(t, name, key, pipeline);
const itemPath = (itemId: string, pipelineId = t.pipeline.id) => `/console/pipelines/${pipelineId}/items/${itemId}`;
const form = (fields: Record<string, string>) => new URLSearchParams(fields);

/** The item's notes through the API, newest first. */
const apiNotes = async (itemId: string) => {
  const res = await t.request("GET", `/v1/ext/notes?item_id=${itemId}`);
  expect(res.status).toBe(200);
  return res.body as { note_id: string; body: string; pinned: boolean; created_by: string; version: number }[];
};

/** Adds a note in the console as the admin and returns it (from the API). */
const addNote = async (itemId: string, body: string, pinned = false) => {
  const res = await admin.post(`${itemPath(itemId)}/notes`, form(pinned ? { body, pinned: "true" } : { body }), itemPath(itemId));
  expect(res.status).toBe(303);
  return (await apiNotes(itemId))[0]!;
};

/** The inner HTML of each rendered note body on a page. */
const noteBodies = (html: string) => [...html.matchAll(/<div class="note-body">([\s\S]*?)<\/div>/g)].map((m) => m[1]!);

const events = (noteId: string) => t.server.ctx.prisma.webhookEvent.findMany({ where: { resourceId: noteId }, orderBy: { seq: "asc" } });
const auditOf = (noteId: string) => t.server.ctx.prisma.auditEvent.findMany({ where: { targetId: noteId }, orderBy: { createdAt: "asc" } });

beforeAll(async () => {
  // About 150 API requests with the one key set up the notes (the default limit is per minute and lower).
  t = await startTestServerWithRateLimit(1000);
  ({ adminUser, admin, member } = await adminAndMemberOverHttp(t));
}, 60_000);
afterAll(async () => {
  await t?.close();
});

it("an admin adds a note: rendered Markdown on the item page, created_by the user, note.created, audit without the body", async () => {
  const item = await newItem("Notes Deal");
  const page = await admin.get(itemPath(item.item_id));
  expect(page.text).toContain("No notes yet.");
  expect(page.text).toMatch(/<label for="note-body">Add a note<\/label>/);
  const res = await admin.post(`${itemPath(item.item_id)}/notes`, form({ body: "**Call** Ada\r\nabout the AddMarker renewal" }));
  expect(res.status).toBe(303);
  expect(res.location).toBe(`${itemPath(item.item_id)}#notes`);
  const [note] = await apiNotes(item.item_id);
  // Browsers send CRLF line ends; the console stores LF.
  expect(note).toMatchObject({ body: "**Call** Ada\nabout the AddMarker renewal", pinned: false, created_by: adminUser.id, version: 1 });
  const shown = await admin.get(itemPath(item.item_id));
  expect(shown.text).toContain("Note added.");
  expect(noteBodies(shown.text)).toEqual(["<p><strong>Call</strong> Ada<br>\nabout the AddMarker renewal</p>\n"]);
  expect(shown.text).toContain(`<strong>${adminUser.email}</strong>`);
  expect((await events(note!.note_id)).map((e) => e.type)).toEqual(["note.created"]);
  const [entry] = await auditOf(note!.note_id);
  expect(entry).toMatchObject({ action: "note.created", actorType: "user", actorId: adminUser.id, targetLabel: `Note on ${item.short_id}` });
  expect(JSON.stringify(entry)).not.toContain("AddMarker");
  expect((await admin.get("/console/audit")).text).toContain("Note added");
});

it("shows pinned notes first, then the others newest first, with their authors (an API key's name)", async () => {
  const item = await newItem("Ordering Deal");
  const first = await addNote(item.item_id, "oldest FirstNote");
  const viaApi = await t.request("POST", "/v1/ext/notes", { item_id: item.item_id, body: "from the API SecondNote" });
  expect(viaApi.status).toBe(201);
  await addNote(item.item_id, "newest ThirdNote");
  const pin = await admin.post(`${itemPath(item.item_id)}/notes/${first.note_id}/pin`, form({ pinned: "true" }), itemPath(item.item_id));
  expect(pin.status).toBe(303);
  const page = (await admin.get(itemPath(item.item_id))).text;
  expect(page).toContain("Note pinned");
  const order = ["FirstNote", "ThirdNote", "SecondNote"].map((marker) => page.indexOf(marker));
  expect(order.every((at) => at > 0)).toBe(true);
  expect([...order].sort((a, b) => a - b)).toEqual(order);
  expect(page).toMatch(/<span class="badge">Pinned<\/span> <strong>/);
  expect(page).toContain("<strong>API key &quot;");
  expect((await apiNotes(item.item_id)).find((n) => n.note_id === first.note_id)).toMatchObject({ pinned: true, version: 2 });
  expect((await auditOf(first.note_id)).map((e) => e.action)).toEqual(["note.created", "note.pinned"]);
  const unpin = await admin.post(`${itemPath(item.item_id)}/notes/${first.note_id}/pin`, form({ pinned: "false" }), itemPath(item.item_id));
  expect(unpin.status).toBe(303);
  expect((await events(first.note_id)).map((e) => e.type)).toEqual(["note.created", "note.updated", "note.updated"]);
});

it("pages the notes with an Older notes link (keyset)", async () => {
  const item = await newItem("Many Notes Deal");
  for (let i = 1; i <= 21; i++) await t.request("POST", "/v1/ext/notes", { item_id: item.item_id, body: `PagedNote-${i}-end` });
  const first = (await admin.get(itemPath(item.item_id))).text;
  expect(noteBodies(first)).toHaveLength(20);
  expect(first).not.toContain("PagedNote-1-end");
  const older = /href="([^"]*\?notes=[^"#]+)#notes">Older notes</.exec(first)?.[1];
  expect(older).toBeDefined();
  const second = (await admin.get(older!.replace(/&amp;/g, "&"))).text;
  expect(noteBodies(second)).toEqual(["<p>PagedNote-1-end</p>\n"]);
  expect(second).toContain("Back to the newest notes");
  expect((await admin.get(`${itemPath(item.item_id)}?notes=not-a-cursor`)).status).toBe(400);
});

it("moves long notes to the next page: a list shows at most two notes of the largest size", async () => {
  const item = await newItem("Long Notes Deal");
  for (let i = 1; i <= 3; i++) {
    const body = `LongNote${i} `.padEnd(NOTE_BODY_MAX, "x");
    expect((await t.request("POST", "/v1/ext/notes", { item_id: item.item_id, body })).status).toBe(201);
  }
  const first = (await admin.get(itemPath(item.item_id))).text;
  expect(noteBodies(first).map((html) => /LongNote\d/.exec(html)?.[0])).toEqual(["LongNote3", "LongNote2"]);
  const older = /href="([^"]*\?notes=[^"#]+)#notes">Older notes</.exec(first)![1]!;
  expect(noteBodies((await admin.get(older)).text).map((html) => /LongNote\d/.exec(html)?.[0])).toEqual(["LongNote1"]);
});

it("edits a note at the version shown; a stale version shows a conflict, keeps the typed text and overwrites nothing", async () => {
  const item = await newItem("Edit Deal");
  const note = await addNote(item.item_id, "first draft");
  const edit = await admin.get(`${itemPath(item.item_id)}/notes/${note.note_id}/edit`);
  expect(edit.status).toBe(200);
  expect(edit.text).toContain('name="version" value="1"');
  expect(edit.text).toMatch(/<label for="note-body">Note<\/label>/);
  // Someone else changes it meanwhile (through the API).
  expect((await t.request("PATCH", `/v1/ext/notes/${note.note_id}`, { body: "their change" })).status).toBe(200);
  const stale = await admin.post(`${itemPath(item.item_id)}/notes/${note.note_id}/edit`, form({ body: "my change", version: "1" }));
  expect(stale.status).toBe(409);
  expect(stale.text).toContain("Someone changed this note since you opened it.");
  expect(stale.text).toContain(">my change</textarea>");
  expect(noteBodies(stale.text)).toEqual([]);
  expect(stale.text).toContain("<p>their change</p>");
  expect(stale.text).toContain('name="version" value="2"');
  expect((await apiNotes(item.item_id))[0]).toMatchObject({ body: "their change", version: 2 });
  // Saving again, now at the version shown with the conflict, replaces it on purpose.
  const saved = await admin.post(`${itemPath(item.item_id)}/notes/${note.note_id}/edit`, form({ body: "my change\r\nEditMarker", version: "2" }));
  expect(saved.status).toBe(303);
  expect((await apiNotes(item.item_id))[0]).toMatchObject({ body: "my change\nEditMarker", version: 3, created_by: adminUser.id });
  const updated = (await events(note.note_id)).at(-1)!;
  expect(updated.payload).toMatchObject({ changed_fields: ["body"], previous: { body: "their change" } });
  const entries = await auditOf(note.note_id);
  expect(entries.map((e) => e.action)).toEqual(["note.created", "note.updated"]);
  expect(entries[1]!.details).toMatchObject({ changed_fields: ["body"] });
  expect(JSON.stringify(entries)).not.toMatch(/EditMarker|my change|their change|first draft/);
  // A body the contract refuses is a 400 with the error beside the field, the text kept.
  const blank = await admin.post(`${itemPath(item.item_id)}/notes/${note.note_id}/edit`, form({ body: "   ", version: "3" }));
  expect(blank.status).toBe(400);
  expect(blank.text).toContain('id="note-body-error"');
  const noVersion = await admin.post(`${itemPath(item.item_id)}/notes/${note.note_id}/edit`, form({ body: "x" }));
  expect(noVersion.status).toBe(400);
  expect((await apiNotes(item.item_id))[0]!.version).toBe(3);
});

it("refuses an empty or too long note with the error beside the field, the text kept; takes one of 65,536 characters", async () => {
  const item = await newItem("Limits Deal");
  const empty = await admin.post(`${itemPath(item.item_id)}/notes`, form({ body: "" }), itemPath(item.item_id));
  expect(empty.status).toBe(400);
  expect(empty.text).toContain('<a href="#note-body">');
  expect(empty.text).toContain('aria-invalid="true"');
  const longest = "é—".repeat(NOTE_BODY_MAX / 2); // up to 9 bytes a character once percent-encoded
  expect((await admin.post(`${itemPath(item.item_id)}/notes`, form({ body: longest }), itemPath(item.item_id))).status).toBe(303);
  expect((await apiNotes(item.item_id))[0]!.body).toBe(longest);
  const tooLong = await admin.post(`${itemPath(item.item_id)}/notes`, form({ body: `${longest}!` }), itemPath(item.item_id));
  expect(tooLong.status).toBe(400);
  expect(tooLong.text).toContain(`at most ${NOTE_BODY_MAX} characters`);
  expect(await apiNotes(item.item_id)).toHaveLength(1);
});

it("deletes a note after a confirmation page at the version shown: note.deleted, audit and flash without the body", async () => {
  const item = await newItem("Delete Note Deal");
  const note = await addNote(item.item_id, "DoomedNoteMarker text");
  const confirm = await admin.get(`${itemPath(item.item_id)}/notes/${note.note_id}/delete`);
  expect(confirm.status).toBe(200);
  expect(confirm.text).toContain(`Delete this note on ${item.short_id}?`);
  expect(confirm.text).toMatch(/<button type="submit" class="button-danger">Delete note<\/button>/);
  // Changed after the confirmation page was opened: the delete shows the note again instead of deleting it.
  expect((await t.request("PATCH", `/v1/ext/notes/${note.note_id}`, { body: "DoomedNoteMarker changed" })).status).toBe(200);
  const stale = await admin.post(`${itemPath(item.item_id)}/notes/${note.note_id}/delete`, form({ version: "1" }));
  expect(stale.status).toBe(409);
  expect(stale.text).toContain("Someone changed this note since you opened it.");
  expect(stale.text).toContain("<p>DoomedNoteMarker changed</p>");
  expect(await apiNotes(item.item_id)).toHaveLength(1);
  const res = await admin.post(`${itemPath(item.item_id)}/notes/${note.note_id}/delete`, form({ version: "2" }));
  expect(res.status).toBe(303);
  expect(res.location).toBe(`${itemPath(item.item_id)}#notes`);
  expect((await admin.get(res.location!)).text).toContain(`Note deleted from ${item.short_id}.`);
  expect((await t.request("GET", `/v1/ext/notes/${note.note_id}`)).status).toBe(404);
  expect((await events(note.note_id)).map((e) => e.type)).toEqual(["note.created", "note.updated", "note.deleted"]);
  const entries = await auditOf(note.note_id);
  expect(entries.map((e) => e.action)).toEqual(["note.created", "note.deleted"]);
  expect(JSON.stringify(entries)).not.toContain("DoomedNoteMarker");
  const sessions = await t.server.ctx.prisma.consoleSession.findMany({ select: { flash: true } });
  expect(JSON.stringify(sessions)).not.toContain("DoomedNoteMarker");
  expect((await admin.get(`${itemPath(item.item_id)}/notes/${note.note_id}/delete`)).status).toBe(404);
});

it("deleting an item in the console deletes its notes (the confirmation page says so)", async () => {
  const item = await newItem("Item With Notes");
  const note = await addNote(item.item_id, "GoesWithItsItem");
  expect((await admin.get(`${itemPath(item.item_id)}/delete`)).text).toContain("Its notes, if it has any, are deleted with it");
  expect((await admin.post(`${itemPath(item.item_id)}/delete`, form({}))).status).toBe(303);
  expect((await t.request("GET", `/v1/ext/notes/${note.note_id}`)).status).toBe(404);
  expect((await admin.get(`${itemPath(item.item_id)}/notes/${note.note_id}/edit`)).status).toBe(404);
});

it("a member reads the notes with no controls, and every note form and page is 403 for them", async () => {
  const item = await newItem("Member Notes Deal");
  const note = await addNote(item.item_id, "MemberCanRead");
  const page = await member.get(itemPath(item.item_id));
  expect(page.status).toBe(200);
  expect(page.text).toContain("MemberCanRead");
  expect(page.text).not.toContain("Add a note");
  expect(page.text).not.toMatch(/\/notes(\/[^"]*)?"/);
  const base = `${itemPath(item.item_id)}/notes`;
  expect((await member.get(`${base}/${note.note_id}/edit`)).status).toBe(403);
  expect((await member.get(`${base}/${note.note_id}/delete`)).status).toBe(403);
  for (const [path, fields] of [
    [base, { body: "member note" }],
    [`${base}/${note.note_id}/edit`, { body: "member edit", version: "1" }],
    [`${base}/${note.note_id}/pin`, { pinned: "true" }],
    [`${base}/${note.note_id}/delete`, { version: "1" }],
  ] as const) {
    expect((await member.post(path, form(fields), itemPath(item.item_id))).status).toBe(403);
  }
  expect(await apiNotes(item.item_id)).toEqual([expect.objectContaining({ body: "MemberCanRead", pinned: false, version: 1 })]);
});

it("a signed-in POST without the CSRF token, or from another origin, is 403 and writes nothing", async () => {
  const item = await newItem("Csrf Notes Deal");
  const note = await addNote(item.item_id, "kept");
  const { cookie } = await signInOverHttp(t.url, adminUser.email, adminUser.password);
  const post = (path: string, origin: string, fields: Record<string, string>) =>
    fetch(`${t.url}${itemPath(item.item_id)}/notes${path}`, {
      method: "POST",
      body: form(fields),
      redirect: "manual",
      headers: { cookie: cookie!, origin, "content-type": "application/x-www-form-urlencoded" },
    });
  expect((await post("", t.url, { body: "forged" })).status).toBe(403);
  expect((await post("", t.url, { body: "forged", _csrf: "forged-token" })).status).toBe(403);
  expect((await post(`/${note.note_id}/pin`, t.url, { pinned: "true" })).status).toBe(403);
  expect((await post(`/${note.note_id}/edit`, "https://evil.example", { body: "forged", version: "1" })).status).toBe(403);
  expect((await post(`/${note.note_id}/delete`, t.url, { version: "1" })).status).toBe(403);
  expect(await apiNotes(item.item_id)).toEqual([expect.objectContaining({ body: "kept", pinned: false, version: 1 })]);
});

it("another company's item or note, or a note under another item's URL, is 404 and stays", async () => {
  const other = await t.newCompany("Other Notes Co");
  const theirItem = await newItem("Their Noted Item", other.apiKey, other.pipeline);
  const theirNote = await t.request("POST", "/v1/ext/notes", { item_id: theirItem.item_id, body: "TheirSecret" }, other.apiKey);
  expect(theirNote.status).toBe(201);
  const theirs = theirNote.body as { note_id: string };
  const theirPath = itemPath(theirItem.item_id, other.pipeline.id);
  expect((await admin.post(`${theirPath}/notes`, form({ body: "into theirs" }), "/console/pipelines")).status).toBe(404);
  const mine = await newItem("My Noted Item");
  const mineNote = await addNote(mine.item_id, "mine");
  const sibling = await newItem("My Other Item");
  for (const [base, noteId] of [
    [`${itemPath(mine.item_id)}/notes`, theirs.note_id],
    [`${theirPath}/notes`, theirs.note_id],
    [`${itemPath(sibling.item_id)}/notes`, mineNote.note_id],
  ] as const) {
    expect((await admin.get(`${base}/${noteId}/edit`)).status).toBe(404);
    expect((await admin.get(`${base}/${noteId}/delete`)).status).toBe(404);
    expect((await admin.post(`${base}/${noteId}/edit`, form({ body: "overwritten", version: "1" }), itemPath(mine.item_id))).status).toBe(404);
    expect((await admin.post(`${base}/${noteId}/pin`, form({ pinned: "true" }), itemPath(mine.item_id))).status).toBe(404);
    expect((await admin.post(`${base}/${noteId}/delete`, form({ version: "1" }), itemPath(mine.item_id))).status).toBe(404);
  }
  expect((await t.request("GET", `/v1/ext/notes/${theirs.note_id}`, undefined, other.apiKey)).body).toMatchObject({ body: "TheirSecret", pinned: false, version: 1 });
  expect(await apiNotes(mine.item_id)).toEqual([expect.objectContaining({ body: "mine", pinned: false, version: 1 })]);
  expect((await admin.get(itemPath(mine.item_id))).text).not.toContain("TheirSecret");
});

it("stored-XSS payloads in note bodies render inert on the item page and in the edit form", async () => {
  const payloads = [...HTML_XSS_PAYLOADS, ...MARKDOWN_XSS_PAYLOADS];
  const item = await newItem("Xss Notes Deal");
  const empty = (await admin.get(itemPath(item.item_id))).text;
  const scriptsOfThePage = (empty.match(/<script/gi) ?? []).length;
  for (let start = 0; start < payloads.length; start += 20) {
    const chunk = payloads.slice(start, start + 20);
    for (const body of chunk) {
      const res = await t.request("POST", "/v1/ext/notes", { item_id: item.item_id, body });
      expect({ body, status: res.status, problem: res.body.code }).toEqual({ body, status: 201, problem: undefined });
    }
    const page = (await admin.get(itemPath(item.item_id))).text;
    const bodies = noteBodies(page);
    expect(bodies).toHaveLength(20);
    for (const html of bodies) expect(inertnessProblems(html)).toEqual([]);
    expect((page.match(/<script/gi) ?? []).length).toBe(scriptsOfThePage);
    const notesSection = page.slice(page.indexOf('<h2 id="notes">'));
    expect(notesSection).not.toMatch(/<(script|img|iframe|svg|math|object|embed|base|meta|style|link|body|details|form action="https)/i);
  }
  const notes = await apiNotes(item.item_id);
  const breakout = notes.find((n) => n.body === "</textarea><script>alert(1)</script>")!;
  const edit = await admin.get(`${itemPath(item.item_id)}/notes/${breakout.note_id}/edit`);
  expect(edit.text).toContain(">&lt;/textarea&gt;&lt;script&gt;alert(1)&lt;/script&gt;</textarea>");
  expect((edit.text.match(/<script/gi) ?? []).length).toBe(scriptsOfThePage);
});
