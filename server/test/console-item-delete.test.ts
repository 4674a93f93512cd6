/**
 * The console's item Delete (CONTRACT "Item deletion and erasure", issue 25): a Delete link on the item page for
 * owners and admins, a confirmation page, a CSRF-protected POST that deletes the item like the API's DELETE, an audit
 * entry naming the user and the short ID without field values, and a redirect to the items list with a flash that
 * names only the short ID. Members see no Delete and get 403; a POST without the CSRF token is 403; another
 * company's item is 404. Over HTTP (the browser walk-through with axe-core is in console-pipelines.test.ts).
 */
import { adminAndMemberOverHttp, createItemOverApi, signInOverHttp, type ConsoleHttp, type ConsoleUser } from "./helpers/console-browser";
import { startTestServer, type TestServer } from "./helpers/test-server";

let t: TestServer;
let admin: ConsoleHttp;
let member: ConsoleHttp;
let adminUser: ConsoleUser;

const newItem = (name: string, key = t.apiKey, pipeline = t.pipeline) => createItemOverApi(t, name, key, pipeline);
const itemPath = (itemId: string, pipelineId = t.pipeline.id) => `/console/pipelines/${pipelineId}/items/${itemId}`;

beforeAll(async () => {
  t = await startTestServer();
  ({ adminUser, admin, member } = await adminAndMemberOverHttp(t));
}, 60_000);
afterAll(async () => {
  await t?.close();
});

it("an admin deletes an item after a confirmation page: redirect to the items list, flash with the short ID, audit without values", async () => {
  const item = await newItem("Console Doomed Deal");
  const task = await t.request("POST", "/v1/ext/tasks", { title: "Call", due_at: "2027-01-01T09:00:00Z", assigned_to: "ada", item_id: item.item_id });
  const page = await admin.get(itemPath(item.item_id));
  expect(page.status).toBe(200);
  expect(page.text).toContain(`href="${itemPath(item.item_id)}/delete"`);
  expect(page.text).toContain(`>Delete item ${item.short_id}</a>`);
  const confirm = await admin.get(`${itemPath(item.item_id)}/delete`);
  expect(confirm.status).toBe(200);
  expect(confirm.text).toContain(`Delete item ${item.short_id}?`);
  expect(confirm.text).toMatch(/<button type="submit" class="button-danger">Delete item /);
  const res = await admin.post(`${itemPath(item.item_id)}/delete`, new URLSearchParams());
  expect(res.status).toBe(303);
  expect(res.location).toBe(`/console/pipelines/${t.pipeline.id}/items`);
  const list = await admin.get(res.location!);
  expect(list.text).toContain(`Item ${item.short_id} deleted. 1 task was unlinked from it.`);
  expect((await t.request("GET", `/v1/ext/items/${item.item_id}`)).status).toBe(404);
  expect((await t.request("GET", `/v1/ext/tasks/${task.body.task_id}`)).body.item_id).toBeNull();
  expect((await admin.get(itemPath(item.item_id))).status).toBe(404);
  const entry = await t.server.ctx.prisma.auditEvent.findFirstOrThrow({ where: { action: "item.deleted", targetId: item.item_id } });
  expect(entry).toMatchObject({ actorType: "user", actorLabel: adminUser.email, targetLabel: item.short_id, details: {} });
  expect(JSON.stringify(entry)).not.toMatch(/Doomed|ConsoleDoomedDeal/);
  const audit = await admin.get("/console/audit");
  expect(audit.text).toContain("Item deleted");
  // The session's flash (stored in the database until shown) held only the short ID, and is gone once shown.
  const sessions = await t.server.ctx.prisma.consoleSession.findMany({ select: { flash: true } });
  expect(JSON.stringify(sessions)).not.toMatch(/Doomed/);
});

it("a member sees no Delete and gets 403 on the confirmation page and the POST; the item stays", async () => {
  const item = await newItem("Member Cannot Delete");
  const page = await member.get(itemPath(item.item_id));
  expect(page.status).toBe(200);
  expect(page.text).not.toContain("/delete");
  expect((await member.get(`${itemPath(item.item_id)}/delete`)).status).toBe(403);
  expect((await member.post(`${itemPath(item.item_id)}/delete`, new URLSearchParams(), itemPath(item.item_id))).status).toBe(403);
  expect((await t.request("GET", `/v1/ext/items/${item.item_id}`)).status).toBe(200);
});

it("a signed-in POST without the CSRF token, or from another origin, is 403 and deletes nothing", async () => {
  const item = await newItem("Csrf Protected");
  const { cookie } = await signInOverHttp(t.url, adminUser.email, adminUser.password);
  expect(cookie).not.toBeNull();
  const post = (origin: string, form: URLSearchParams) =>
    fetch(`${t.url}${itemPath(item.item_id)}/delete`, {
      method: "POST",
      body: form,
      redirect: "manual",
      headers: { cookie: cookie!, origin, "content-type": "application/x-www-form-urlencoded" },
    });
  expect((await post(t.url, new URLSearchParams())).status).toBe(403);
  expect((await post(t.url, new URLSearchParams({ _csrf: "forged-token" }))).status).toBe(403);
  expect((await post("https://evil.example", new URLSearchParams())).status).toBe(403);
  expect((await t.request("GET", `/v1/ext/items/${item.item_id}`)).status).toBe(200);
});

it("another company's item, or an item under another pipeline's URL, is 404 and stays", async () => {
  const other = await t.newCompany("Other Delete Co");
  const theirs = await newItem("Their Item", other.apiKey, other.pipeline);
  expect((await admin.get(`${itemPath(theirs.item_id, other.pipeline.id)}/delete`)).status).toBe(404);
  expect((await admin.post(`${itemPath(theirs.item_id, other.pipeline.id)}/delete`, new URLSearchParams(), "/console/pipelines")).status).toBe(404);
  expect((await t.request("GET", `/v1/ext/items/${theirs.item_id}`, undefined, other.apiKey)).status).toBe(200);
  const mine = await newItem("Wrong Pipeline Url");
  expect((await admin.post(`${itemPath(mine.item_id, other.pipeline.id)}/delete`, new URLSearchParams(), "/console/pipelines")).status).toBe(404);
  expect((await t.request("GET", `/v1/ext/items/${mine.item_id}`)).status).toBe(200);
});
