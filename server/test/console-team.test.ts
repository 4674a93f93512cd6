/**
 * The console's Team page (owner only) in a real headless Chromium: invite by email (a one-time link, valid 7 days,
 * stored hashed), accept it with a password, change roles, remove users after a confirmation, the last owner
 * protected, another company's user 404, admins refused, audit events, axe-core on every page.
 */
import crypto from "node:crypto";
import { BROWSER_TEST_TIMEOUT_MS, clickAndLoad, createConsoleUser, expectNoSeriousAxeViolations, signIn, submitForm, useConsoleTestServer } from "./helpers/console-browser";
import { startTestServer } from "./helpers/test-server";

jest.setTimeout(BROWSER_TEST_TIMEOUT_MS);
const env = useConsoleTestServer("owner", () => startTestServer());

it("invites a user with a one-time link; they choose a password, join with the invited role and are signed in", async () => {
  const page = await signIn(env.browser, env.t.url, env.user);
  await page.goto("/console/team");
  await expectNoSeriousAxeViolations(page);
  await page.getByLabel("Email address").fill("not-an-email");
  expect((await submitForm(page, page.getByRole("button", { name: "Create invitation link" }))).status()).toBe(400);
  await expect(page.getByRole("alert").innerText()).resolves.toContain("Enter an email address like name@example.com.");
  await expectNoSeriousAxeViolations(page);
  await page.getByLabel("Email address").fill("Grace@Acme.Example");
  await page.getByLabel("Role", { exact: true }).selectOption("admin");
  expect((await submitForm(page, page.getByRole("button", { name: "Create invitation link" }))).status()).toBe(303);
  const link = await page.getByLabel("Invitation link for grace@acme.example").inputValue();
  expect(link).toMatch(new RegExp(`^${env.t.url}/console/invite/[A-Za-z0-9_-]{43}$`));
  await expect(page.getByRole("row", { name: /grace@acme\.example\s+admin/ }).count()).resolves.toBe(1);
  await expectNoSeriousAxeViolations(page);
  // Only the token's hash is stored; the invitation expires in 7 days.
  const token = link.split("/").pop()!;
  const invite = await env.t.server.ctx.prisma.invite.findFirstOrThrow({ where: { email: "grace@acme.example" } });
  expect(invite.tokenHash).toBe(crypto.createHash("sha256").update(token).digest("hex"));
  expect(invite.expiresAt.getTime() - invite.createdAt.getTime()).toBe(7 * 24 * 3600 * 1000);
  // Shown once.
  await page.goto("/console/team");
  expect(await page.content()).not.toContain(token);

  const guest = await env.browser.newContext({ baseURL: env.t.url });
  const invitee = await guest.newPage();
  await invitee.goto(link);
  await expect(invitee.getByRole("heading", { level: 1 }).innerText()).resolves.toBe("Join Acme Test on Stageline");
  await expectNoSeriousAxeViolations(invitee);
  await invitee.getByLabel("Password", { exact: true }).fill("too short");
  await invitee.getByLabel("Password again").fill("too short");
  expect((await submitForm(invitee, invitee.getByRole("button", { name: "Join Acme Test" }))).status()).toBe(400);
  await expect(invitee.getByRole("alert").innerText()).resolves.toContain("at least 12 characters");
  await expectNoSeriousAxeViolations(invitee);
  await invitee.getByLabel("Password", { exact: true }).fill("correct horse battery staple");
  await invitee.getByLabel("Password again").fill("correct horse battery staple");
  expect((await submitForm(invitee, invitee.getByRole("button", { name: "Join Acme Test" }))).status()).toBe(303);
  expect(invitee.url()).toMatch(/\/console\/keys$/);
  await expect(invitee.getByRole("banner").innerText()).resolves.toContain("grace@acme.example (admin)");
  // The link works once.
  const again = await guest.newPage();
  const reused = await again.goto(link);
  expect(reused!.status()).toBe(404);
  await guest.close();

  // She can sign in with her password later.
  const later = await signIn(env.browser, env.t.url, { email: "grace@acme.example", password: "correct horse battery staple" });
  await later.context().close();

  const actions = (await env.t.server.ctx.prisma.auditEvent.findMany({ where: { companyId: env.t.companyId, action: { in: ["user.invited", "user.joined"] } } })).map((e) => [e.action, e.actorLabel, e.targetLabel]);
  expect(actions).toEqual(
    expect.arrayContaining([
      ["user.invited", env.user.email, "grace@acme.example"],
      ["user.joined", "grace@acme.example", "grace@acme.example"],
    ]),
  );
  await page.context().close();
});

it("changes roles and removes users; the last owner can be neither demoted nor removed", async () => {
  const member = await createConsoleUser(env.t, "member");
  const memberPage = await signIn(env.browser, env.t.url, member);
  const page = await signIn(env.browser, env.t.url, env.user);
  await page.goto("/console/team");

  await page.getByLabel(`Role of ${member.email}`).selectOption("admin");
  expect((await submitForm(page, page.getByRole("button", { name: `Change role of ${member.email}` }))).status()).toBe(303);
  await expect(page.getByRole("status").innerText()).resolves.toContain(`${member.email} is now admin.`);
  expect((await env.t.server.ctx.prisma.user.findUniqueOrThrow({ where: { id: member.id } })).role).toBe("admin");

  // The only owner cannot demote themself.
  await page.getByLabel(`Role of ${env.user.email}`).selectOption("member");
  expect((await submitForm(page, page.getByRole("button", { name: `Change role of ${env.user.email}` }))).status()).toBe(400);
  await expect(page.getByRole("alert").innerText()).resolves.toContain("last owner");
  await expect(page.getByRole("alert").getByRole("link").first().getAttribute("href")).resolves.toBe(`#role-${env.user.id}`);
  await expectNoSeriousAxeViolations(page);
  expect((await env.t.server.ctx.prisma.user.findUniqueOrThrow({ where: { id: env.user.id } })).role).toBe("owner");

  // Nor remove themself.
  await page.goto(`/console/team/users/${env.user.id}/remove`);
  expect((await submitForm(page, page.getByRole("button", { name: "Remove user" }))).status()).toBe(400);
  await expect(page.getByRole("alert").innerText()).resolves.toContain("last owner");

  // Remove the (now admin) member after the confirmation page: their session ends.
  await page.goto("/console/team");
  await clickAndLoad(page, page.getByRole("link", { name: `Remove ${member.email}` }));
  await expect(page.getByRole("heading", { level: 1 }).innerText()).resolves.toBe(`Remove ${member.email}?`);
  await expectNoSeriousAxeViolations(page);
  expect((await submitForm(page, page.getByRole("button", { name: "Remove user" }))).status()).toBe(303);
  expect(await env.t.server.ctx.prisma.user.findUnique({ where: { id: member.id } })).toBeNull();
  await memberPage.goto("/console/keys");
  expect(memberPage.url()).toContain("/console/sign-in");

  const actions = (await env.t.server.ctx.prisma.auditEvent.findMany({ where: { companyId: env.t.companyId, targetId: member.id }, orderBy: { createdAt: "asc" } })).map((e) => e.action);
  expect(actions).toEqual(expect.arrayContaining(["user.role_changed", "user.removed"]));
  await memberPage.context().close();
  await page.context().close();
});

it("answers 404 for another company's user and 403 to an admin", async () => {
  const other = await env.t.newCompany("Other Team Co");
  const stranger = await createConsoleUser(env.t, "member", other.companyId);
  const page = await signIn(env.browser, env.t.url, env.user);
  const res = await page.goto(`/console/team/users/${stranger.id}/remove`);
  expect(res!.status()).toBe(404);
  const token = await page.locator('input[name="_csrf"]').first().inputValue();
  const status = await page.evaluate(async ({ csrf, id }) => {
    const r = await fetch(`/console/team/users/${id}/role`, { method: "POST", body: new URLSearchParams({ _csrf: csrf, role: "owner" }) });
    return r.status;
  }, { csrf: token, id: stranger.id });
  expect(status).toBe(404);
  expect((await env.t.server.ctx.prisma.user.findUniqueOrThrow({ where: { id: stranger.id } })).role).toBe("member");

  const admin = await createConsoleUser(env.t, "admin");
  const adminPage = await signIn(env.browser, env.t.url, admin);
  expect((await adminPage.goto("/console/team"))!.status()).toBe(403);
  await expect(adminPage.getByRole("navigation", { name: "Console" }).getByRole("link").allInnerTexts()).resolves.toEqual(["API keys", "Webhooks", "Pipelines", "Connected apps", "Developer apps", "Events", "Requests", "Audit log", "Your profile", "Two-factor sign-in"]);
  await adminPage.context().close();
  await page.context().close();
});

it("Your profile: a member sets their display name by its label; the Team page shows it and a copyable user ID (axe clean)", async () => {
  const member = await createConsoleUser(env.t, "member");
  const memberPage = await signIn(env.browser, env.t.url, member);
  await clickAndLoad(memberPage, memberPage.getByRole("link", { name: "Your profile" }));
  await expect(memberPage.getByRole("heading", { level: 1 }).innerText()).resolves.toBe("Your profile");
  await expectNoSeriousAxeViolations(memberPage);
  // The field takes at most 255 characters (the server refuses more: console-profile.test.ts).
  await memberPage.getByLabel("Display name").fill("x".repeat(256));
  await expect(memberPage.getByLabel("Display name").inputValue()).resolves.toBe("x".repeat(255));
  await memberPage.getByLabel("Display name").fill("Mia Member");
  expect((await submitForm(memberPage, memberPage.getByRole("button", { name: "Save display name" }))).status()).toBe(303);
  await expect(memberPage.getByRole("status").innerText()).resolves.toContain('Your display name is now "Mia Member".');

  const page = await signIn(env.browser, env.t.url, env.user);
  await page.goto("/console/team");
  const row = page.getByRole("row", { name: new RegExp(member.email.replace(/\./g, "\\.")) });
  await expect(row.innerText()).resolves.toContain("Mia Member");
  await expect(row.locator("code").innerText()).resolves.toBe(member.id);
  await expect(row.getByRole("button", { name: `Copy user ID of ${member.email}` }).isVisible()).resolves.toBe(true);
  await expectNoSeriousAxeViolations(page);
  await memberPage.context().close();
  await page.context().close();
});
