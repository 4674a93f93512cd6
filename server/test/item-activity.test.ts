/**
 * An item's Activity on the console's item page (issue 40 item 5, CONTRACT "Console: events, activity and charts"),
 * over HTTP: the item's, its tasks' and its notes' events newest first, with previous and new values (stage and
 * status by name, custom fields by label) and who did each (API key, OAuth app, console user; "unknown" when not
 * recorded); erased events say so; pages of 20 with an "Older activity" link, never the whole history; a cursor not
 * issued for this item is 400; another company's item is 404 and its events never show; members read; one date
 * format (`YYYY-MM-DD HH:mm UTC`). The browser walk-through with axe-core is in console-notes-browser.test.ts.
 */
import { runAsEventActor } from "../src/db/event-actor";
import { readItemActivity } from "../src/db/item-activity";
import type { AuthContext } from "../src/services/api-keys";
import { eventActorOfAuth } from "../src/services/event-actors";
import { ACTIVITY_PAGE_SIZE } from "../src/services/item-activity";
import { updateItem } from "../src/services/items";
import { adminAndMemberOverHttp, createItemOverApi, type ConsoleHttp, type ConsoleUser } from "./helpers/console-browser";
import { startTestServerWithRateLimit, type TestServer } from "./helpers/test-server";

let t: TestServer;
let admin: ConsoleHttp;
let member: ConsoleHttp;
let adminUser: ConsoleUser;

const itemPath = (itemId: string, pipelineId = t.pipeline.id) => `/console/pipelines/${pipelineId}/items/${itemId}`;
const form = (fields: Record<string, string>) => new URLSearchParams(fields);

/** The Activity section of an item page. */
const activityOf = (html: string) => {
  const section = /<section class="activity"[\s\S]*?<\/section>/.exec(html)?.[0];
  if (!section) throw new Error("no Activity section on the page");
  return section;
};
/** The entries' headline lines ("summary by actor, time"), tags stripped, in page order. */
const headlines = (html: string) =>
  [...activityOf(html).matchAll(/<p class="activity-meta">([\s\S]*?)<\/p>/g)].map((m) => decode(m[1]!.replace(/<[^>]+>/g, "")));
/** The changes tables' rows as [label, before, after], in page order. */
const changeRows = (html: string) =>
  [...activityOf(html).matchAll(/<tr><th scope="row">(.*?)<\/th><td>(.*?)<\/td><td>(.*?)<\/td><\/tr>/g)].map((m) => [m[1], m[2], m[3]].map((s) => decode(s!)));
const decode = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
/** The "Older activity" link's href, or null. */
const olderLink = (html: string) => /<a href="([^"]+)">Older activity<\/a>/.exec(activityOf(html))?.[1]?.replace(/&amp;/g, "&") ?? null;
const TIME = /\d{4}-\d\d-\d\d \d\d:\d\d UTC/;

beforeAll(async () => {
  t = await startTestServerWithRateLimit(1000);
  ({ adminUser, admin, member } = await adminAndMemberOverHttp(t));
}, 60_000);
afterAll(async () => {
  await t?.close();
});

it("shows what changed, by whom, newest first: item, task and note events with previous and new values", async () => {
  const item = await createItemOverApi(t, "Activity Deal");
  const [lead, won] = [t.pipeline.stages[0]!, t.pipeline.stages[1]!];
  const patch = await t.request("PATCH", `/v1/ext/items/${item.item_id}`, { stage_id: won.id, metadata: { deal_value: 1200 }, name: "Activity Deal 2" });
  expect(patch.status).toBe(200);
  const task = await t.request("POST", "/v1/ext/tasks", { title: "Call Ada", due_at: "2026-12-09T10:30:00Z", assigned_to: "ada", item_id: item.item_id });
  expect(task.status).toBe(201);
  expect((await t.request("PATCH", `/v1/ext/tasks/${task.body.task_id}`, { is_completed: true })).status).toBe(200);
  const note = await admin.post(`${itemPath(item.item_id)}/notes`, form({ body: "Spoke to <b>Ada</b>" }), itemPath(item.item_id));
  expect(note.status).toBe(303);

  const page = await admin.get(itemPath(item.item_id));
  expect(page.status).toBe(200);
  expect(activityOf(page.text)).toMatch(/<h2 id="activity-heading">Activity<\/h2>/);
  const lines = headlines(page.text);
  expect(lines.map((l) => l.replace(TIME, "TIME"))).toEqual([
    `Note added by ${adminUser.email}, TIME`,
    'Task "Call Ada" completed by API key "Test key", TIME',
    'Task "Call Ada" created by API key "Test key", TIME',
    'Item changed by API key "Test key", TIME',
    `Item created in stage "${lead.name}", status "${lead.statuses[0]!.name}" by API key "Test key", TIME`,
  ]);
  const rows = changeRows(page.text);
  expect(rows).toEqual(
    expect.arrayContaining([
      ["Text", "Not set", "Spoke to <b>Ada</b>"],
      ["Done", "No", "Yes"],
      ["Name", "Activity Deal", "Activity Deal 2"],
      ["Stage", lead.name, won.name],
      ["Status", lead.statuses[0]!.name, won.statuses[0]!.name],
      ["Deal value", "Not set", "1200"],
    ]),
  );
  expect(rows.find((r) => r[0] === "Completed")?.[2]).toMatch(TIME);
  // The note's text is escaped, never markup; the stage change and the completion show once each (item.stage_changed
  // and task.completed are written with an item.updated / task.updated of the same change and body).
  expect(activityOf(page.text)).toContain("Spoke to &lt;b&gt;Ada&lt;/b&gt;");
  expect(rows.filter((r) => r[0] === "Stage")).toHaveLength(1);

  // Recorded on the events themselves, and the item each belongs to.
  const stored = await t.server.ctx.prisma.webhookEvent.findMany({ where: { companyId: t.companyId }, orderBy: { seq: "asc" } });
  const mine = stored.filter((e) => [item.item_id, task.body.task_id].includes(e.resourceId) || (e.payload as { item_id?: string }).item_id === item.item_id);
  expect(mine.map((e) => [e.type, e.actorType, e.actorLabel])).toEqual([
    ["item.created", "api_key", "Test key"],
    ["item.updated", "api_key", "Test key"],
    ["item.stage_changed", "api_key", "Test key"],
    ["task.created", "api_key", "Test key"],
    ["task.updated", "api_key", "Test key"],
    ["task.completed", "api_key", "Test key"],
    ["note.created", "user", adminUser.email],
  ]);
  expect(mine.find((e) => e.type === "note.created")!.actorId).toBe(adminUser.id);
  expect(mine.find((e) => e.type === "item.created")!.actorId).toBe(t.keyId);
});

it("prints Created, Updated and every time as YYYY-MM-DD HH:mm UTC, never a raw ISO string", async () => {
  const item = await createItemOverApi(t, "Dated Deal");
  expect((await t.request("POST", "/v1/ext/tasks", { title: "Dated task", due_at: "2026-12-07T23:04:59Z", assigned_to: "ada", item_id: item.item_id })).status).toBe(201);
  const { text } = await admin.get(itemPath(item.item_id));
  const created = (await t.request("GET", `/v1/ext/items/${item.item_id}`)).body.created_at as string;
  expect(text).toContain(`<dt>Created</dt><dd><time datetime="${created}">${created.slice(0, 10)} ${created.slice(11, 16)} UTC</time></dd>`);
  expect(text).toMatch(/<dt>Updated<\/dt><dd><time datetime="[^"]+">\d{4}-\d\d-\d\d \d\d:\d\d UTC<\/time><\/dd>/);
  expect(text).toContain("<td>2026-12-07 23:04 UTC</td>");
  // ISO 8601 only inside datetime attributes (machine-readable), nowhere in the text people read.
  expect(text.replace(/datetime="[^"]*"/g, "")).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:\d\d/);
});

it("names an OAuth app, and says unknown for events whose author was not recorded", async () => {
  const item = await createItemOverApi(t, "Actor Deal");
  const oauth: AuthContext = {
    keyId: "grant-1",
    keyName: "Acme Sync",
    scopes: ["items:read", "items:write"],
    expiresAt: null,
    company: { id: t.companyId, name: "Test" },
    credential: { kind: "oauth", grantId: "grant-1", clientId: "client-1", appName: "Acme Sync", userId: null },
    counterKey: "grant:grant-1",
  };
  await runAsEventActor(eventActorOfAuth(oauth), () => updateItem(t.server.ctx, t.companyId, item.item_id, { name: "Actor Deal (app)" }));
  // Outside any request's scope (as every event written before this change): no actor stored.
  await updateItem(t.server.ctx, t.companyId, item.item_id, { name: "Actor Deal (nobody)" });
  const lines = headlines((await admin.get(itemPath(item.item_id))).text);
  expect(lines.slice(0, 2).map((l) => l.replace(TIME, "TIME"))).toEqual(["Item changed by unknown, TIME", 'Item changed by OAuth app "Acme Sync", TIME']);
});

it("records the API key of a change made through the MCP endpoint", async () => {
  const item = await createItemOverApi(t, "Agent Deal");
  const call = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "update_item", arguments: { item_id: item.item_id, name: "Agent Deal (MCP)" } } };
  const res = await fetch(`${t.url}/v1/ext/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "x-api-key": t.apiKey },
    body: JSON.stringify(call),
  });
  expect(res.status).toBe(200);
  expect(await res.text()).toContain("Agent Deal (MCP)");
  const [updated] = await t.server.ctx.prisma.webhookEvent.findMany({ where: { resourceId: item.item_id, type: "item.updated" } });
  expect(updated).toMatchObject({ actorType: "api_key", actorId: t.keyId, actorLabel: "Test key" });
});

it("shows that a deleted note's events were erased, without their text", async () => {
  const item = await createItemOverApi(t, "Erased Deal");
  const created = await t.request("POST", "/v1/ext/notes", { item_id: item.item_id, body: "SecretNoteText" });
  expect(created.status).toBe(201);
  expect((await t.request("DELETE", `/v1/ext/notes/${created.body.note_id}`)).status).toBe(204);
  const section = activityOf((await admin.get(itemPath(item.item_id))).text);
  expect(section).not.toContain("SecretNoteText");
  expect(headlines(section).map((l) => l.replace(TIME, "TIME"))).toEqual([
    'Note deleted by API key "Test key", TIME',
    'Note added by API key "Test key", TIME',
    expect.stringMatching(/^Item created/),
  ]);
  expect(section.match(/Erased: this event's content was deleted/g)).toHaveLength(2);
});

it("pages 20 at a time, newest first, with an Older activity link; a cursor not issued for this item is 400", async () => {
  const item = await createItemOverApi(t, "Busy Deal");
  const updates = 2 * ACTIVITY_PAGE_SIZE + 4;
  for (let i = 1; i <= updates; i++) await updateItem(t.server.ctx, t.companyId, item.item_id, { name: `Busy Deal ${i}` });
  const seen: string[] = [];
  let path: string | null = itemPath(item.item_id);
  let pages = 0;
  while (path) {
    const page = await admin.get(path);
    expect(page.status).toBe(200);
    const rows = changeRows(page.text);
    expect(rows.length).toBeLessThanOrEqual(ACTIVITY_PAGE_SIZE);
    seen.push(...rows.map((r) => r[2]!), ...headlines(page.text).filter((l) => l.startsWith("Item created")));
    if (pages > 0) expect(page.text).toContain("Back to the newest activity");
    path = olderLink(page.text);
    pages++;
  }
  expect(pages).toBe(3);
  expect(seen).toEqual([...Array.from({ length: updates }, (_, i) => `Busy Deal ${updates - i}`), expect.stringMatching(/^Item created/)]);

  const other = await createItemOverApi(t, "Other Busy Deal");
  const [otherEvent] = await t.server.ctx.prisma.webhookEvent.findMany({ where: { resourceId: other.item_id } });
  for (const cursor of ["nope", "00000000-0000-7000-8000-000000000000", otherEvent!.id]) {
    const res = await admin.get(`${itemPath(item.item_id)}?activity=${encodeURIComponent(cursor)}`);
    expect(res.status).toBe(400);
    expect(res.text).toContain("This Activity page is not available any more");
  }
});

it("another company's item is 404, and its events never show in this company's Activity", async () => {
  const other = await t.newCompany("Other Activity Co");
  const theirs = await createItemOverApi(t, "Their Activity Item", other.apiKey, other.pipeline);
  expect((await t.request("PATCH", `/v1/ext/items/${theirs.item_id}`, { name: "TheirSecretName" }, other.apiKey)).status).toBe(200);
  expect((await admin.get(itemPath(theirs.item_id, other.pipeline.id))).status).toBe(404);
  expect((await admin.get(itemPath(theirs.item_id))).status).toBe(404);
  expect((await member.get(itemPath(theirs.item_id, other.pipeline.id))).status).toBe(404);
  // The data layer itself is scoped: company A asking for B's item finds nothing.
  expect((await readItemActivity(t.server.ctx.prisma, t.companyId, theirs.item_id, null, 10)).rows).toEqual([]);
  expect((await readItemActivity(t.server.ctx.prisma, other.companyId, theirs.item_id, null, 10)).rows).toHaveLength(2);
  const [theirEvent] = await t.server.ctx.prisma.webhookEvent.findMany({ where: { resourceId: theirs.item_id } });
  const mine = await createItemOverApi(t, "My Activity Item");
  expect((await admin.get(`${itemPath(mine.item_id)}?activity=${theirEvent!.id}`)).status).toBe(400);
  expect((await admin.get(itemPath(mine.item_id))).text).not.toContain("TheirSecretName");
});

it("members read the Activity", async () => {
  const item = await createItemOverApi(t, "Member Deal");
  const page = await member.get(itemPath(item.item_id));
  expect(page.status).toBe(200);
  expect(headlines(page.text)).toEqual([expect.stringMatching(/^Item created in stage .* by API key "Test key", \d{4}-\d\d-\d\d \d\d:\d\d UTC$/)]);
});
