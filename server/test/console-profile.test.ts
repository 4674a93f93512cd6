/**
 * "Your profile" and the Team page's people columns over HTTP (issue 30 item 4, CONTRACT "People"): every user sets
 * their own display name (CSRF-checked, labelled, validated, audited without secrets); the Team page shows each
 * user's display name and user ID to copy; another user's name cannot be set through the form.
 */
import { consoleOverHttp, createConsoleUser, type ConsoleHttp, type ConsoleUser } from "./helpers/console-browser";
import { startTestServer, type TestServer } from "./helpers/test-server";

let t: TestServer;
let ownerUser: ConsoleUser;
let memberUser: ConsoleUser;
let owner: ConsoleHttp;
let member: ConsoleHttp;

beforeAll(async () => {
  t = await startTestServer();
  ownerUser = await createConsoleUser(t, "owner");
  memberUser = await createConsoleUser(t, "member");
  owner = await consoleOverHttp(t.url, ownerUser);
  member = await consoleOverHttp(t.url, memberUser);
});
afterAll(async () => {
  await t?.close();
});

const nameOf = async (id: string) => (await t.server.ctx.prisma.user.findUniqueOrThrow({ where: { id } })).name;
const form = (fields: Record<string, string>) => new URLSearchParams(fields);

it("a member reaches Your profile from the nav and sets, changes and clears their own display name", async () => {
  const page = await member.get("/console/profile");
  expect(page.status).toBe(200);
  expect(page.text).toContain('<a href="/console/profile"');
  expect(page.text).toContain('<label for="display-name">Display name</label>');
  expect(page.text).toContain(`<code id="my-user-id" class="wrap">${memberUser.id}</code>`);
  expect(page.text).toMatch(/<input type="hidden" name="_csrf" value="[^"]+">/);

  const saved = await member.post("/console/profile/name", form({ name: "  Mia Member  " }), "/console/profile");
  expect(saved.status).toBe(303);
  expect(saved.location).toBe("/console/profile");
  expect(await nameOf(memberUser.id)).toBe("Mia Member");
  const after = await member.get("/console/profile");
  expect(after.text).toMatch(/Your display name is now (&#34;|&quot;)Mia Member(&#34;|&quot;)\./);
  expect(after.text).toContain('value="Mia Member"');

  // GET /v1/ext/users shows it.
  const users = await t.request("GET", "/v1/ext/users", undefined, t.apiKey);
  expect(users.body).toContainEqual({ user_id: memberUser.id, name: "Mia Member", email: memberUser.email });

  expect((await member.post("/console/profile/name", form({ name: "" }), "/console/profile")).status).toBe(303);
  expect(await nameOf(memberUser.id)).toBeNull();

  const audit = await t.server.ctx.prisma.auditEvent.findMany({ where: { companyId: t.companyId, action: "user.name_changed", targetId: memberUser.id }, orderBy: { createdAt: "asc" } });
  expect(audit.map((e) => [e.actorLabel, e.targetLabel, e.details])).toEqual([
    [memberUser.email, memberUser.email, { name: "Mia Member" }],
    [memberUser.email, memberUser.email, { name: "(none)" }],
  ]);
  expect(JSON.stringify(audit)).not.toContain(memberUser.password);
});

it("re-renders with 400 and a linked error for a name too long or with NUL, keeping the stored one", async () => {
  expect((await member.post("/console/profile/name", form({ name: "Kept" }), "/console/profile")).status).toBe(303);
  const long = await member.post("/console/profile/name", form({ name: "x".repeat(256) }), "/console/profile");
  expect(long.status).toBe(400);
  expect(long.text).toContain('href="#display-name"');
  expect(long.text).toContain('id="display-name-error"');
  expect(long.text).toContain('aria-invalid="true" aria-describedby="display-name-error"');
  expect(long.text).toContain("at most 255 characters");
  const nul = await member.post("/console/profile/name", form({ name: "Ki\u0000m" }), "/console/profile");
  expect(nul.status).toBe(400);
  expect(await nameOf(memberUser.id)).toBe("Kept");
});

it("refuses a POST without the CSRF token, and only ever changes the signed-in user's own name", async () => {
  const res = await fetch(`${t.url}/console/profile/name`, { method: "POST", body: form({ name: "Forged" }), headers: { origin: t.url }, redirect: "manual" });
  expect(res.status).toBe(403);
  // A user_id in the form is ignored: the session's user is the one changed.
  expect((await member.post("/console/profile/name", form({ name: "Only Me", user_id: ownerUser.id, id: ownerUser.id }), "/console/profile")).status).toBe(303);
  expect(await nameOf(memberUser.id)).toBe("Only Me");
  expect(await nameOf(ownerUser.id)).toBeNull();
});

it("the Team page shows every user's display name and user ID to copy", async () => {
  await owner.post("/console/profile/name", form({ name: "Olga <Owner>" }), "/console/profile");
  const team = await owner.get("/console/team");
  expect(team.status).toBe(200);
  expect(team.text).toContain('<th scope="col">Display name</th><th scope="col">User ID</th>');
  for (const user of [ownerUser, memberUser]) {
    expect(team.text).toContain(`<code id="user-id-${user.id}" class="wrap">${user.id}</code>`);
    expect(team.text).toContain(`data-copy-target="user-id-${user.id}" aria-label="Copy user ID of ${user.email}"`);
  }
  expect(team.text).toContain("Olga &lt;Owner&gt;");
  expect(team.text).not.toContain("Olga <Owner>");
  // Members do not see the Team page.
  expect((await member.get("/console/team")).status).toBe(403);
});

it("an item's page names a task's assignee by display name, and shows a free assigned_to as it is", async () => {
  await member.post("/console/profile/name", form({ name: "Mia Assignee" }), "/console/profile");
  const stage = t.pipeline.stages[0]!;
  const item = await t.request("POST", "/v1/ext/items", { name: "Assigned deal", pipeline_id: t.pipeline.id, stage_id: stage.id });
  expect(item.status).toBe(201);
  const due = "2026-12-01T09:00:00Z";
  await t.request("POST", "/v1/ext/tasks", { title: "Call Mia", due_at: due, assigned_to: memberUser.id, item_id: item.body.item_id });
  await t.request("POST", "/v1/ext/tasks", { title: "Call team", due_at: due, assigned_to: "sales-team", item_id: item.body.item_id });
  const page = await owner.get(`/console/pipelines/${t.pipeline.id}/items/${item.body.item_id}`);
  expect(page.status).toBe(200);
  expect(page.text).toMatch(/<td>Call Mia<\/td><td>[^<]*<\/td><td>Mia Assignee<\/td>/);
  expect(page.text).toMatch(/<td>Call team<\/td><td>[^<]*<\/td><td>sales-team<\/td>/);
});
