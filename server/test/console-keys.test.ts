/**
 * The console's API keys page in a real headless Chromium: create a key (shown once, with a copy button, never in
 * a URL, gone after a reload or Back), use it on the API (200), rename it, revoke it after a confirmation (then
 * 401), form errors in the error summary, audit events, and axe-core on every page. With UPDATE_SCREENSHOTS=1 the
 * test writes docs/console-api-keys.png.
 */
import { BROWSER_TEST_TIMEOUT_MS, clickAndLoad, createConsoleUser, expectNoSeriousAxeViolations, signIn, submitForm, updateScreenshot, useConsoleTestServer } from "./helpers/console-browser";
import { startTestServer } from "./helpers/test-server";
import { createApiKey } from "../src/services/api-keys";

jest.setTimeout(BROWSER_TEST_TIMEOUT_MS);

const env = useConsoleTestServer("admin", () => startTestServer());

it("creates, renames and revokes a key, which works on the API until it is revoked", async () => {
  const page = await signIn(env.browser, env.t.url, env.user);
  await page.goto("/console/keys");
  await expectNoSeriousAxeViolations(page);
  // Every scope is ticked by default; untick one.
  for (const scope of ["items:read", "items:write", "tasks:read", "tasks:write", "hooks:manage"]) {
    await expect(page.getByLabel(scope).isChecked()).resolves.toBe(true);
  }
  await page.getByLabel("Name", { exact: true }).fill("Zapier <production>");
  await page.getByLabel("hooks:manage").uncheck();
  await clickAndLoad(page, page.getByRole("button", { name: "Create key" }));
  await page.waitForURL(/\/console\/keys$/);

  const secret = page.getByLabel("Your new API key");
  const key = await secret.inputValue();
  expect(key).toMatch(/^sl_[a-z0-9]{8}_[A-Za-z0-9_-]{43}$/);
  expect(page.url()).not.toContain(key);
  await expect(page.getByRole("button", { name: "Copy" }).isVisible()).resolves.toBe(true);
  await expect(page.getByRole("status").innerText()).resolves.toContain('API key "Zapier <production>" created');
  await expectNoSeriousAxeViolations(page);
  await updateScreenshot(page, "console-api-keys.png");

  // The copy button puts the key on the clipboard.
  await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: env.t.url });
  await page.getByRole("button", { name: "Copy" }).click();
  // The page's script writes the clipboard asynchronously, then says "Copied": read it after that, not in a race.
  await page.getByRole("button", { name: "Copied" }).waitFor();
  const clipboard = () => (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText();
  await expect(page.evaluate(clipboard)).resolves.toBe(key);

  // Shown once: a reload, and a later visit, do not show it again; the HTML never contains it.
  await page.goto(page.url());
  await expect(page.getByLabel("Your new API key").count()).resolves.toBe(0);
  expect(await page.content()).not.toContain(key);
  await page.goBack();
  expect(await page.content()).not.toContain(key);
  await page.goto("/console/keys");

  const row = page.getByRole("row", { name: /Zapier <production>/ });
  await expect(row.innerText()).resolves.toMatch(/items:read, items:write, tasks:read, tasks:write\s+.*Never\s+Never\s+active/s);

  // The key works on the API with the chosen scopes.
  const me = await env.t.request("GET", "/v1/ext/me", undefined, key);
  expect(me.status).toBe(200);
  expect(me.body.key.scopes).toEqual(["items:read", "items:write", "tasks:read", "tasks:write"]);
  expect(me.body.key.name).toBe("Zapier <production>");

  // Rename.
  await clickAndLoad(page, row.getByRole("link", { name: /Rename/ }));
  await expect(page.getByRole("heading", { level: 1 }).innerText()).resolves.toBe('Rename API key "Zapier <production>"');
  await expectNoSeriousAxeViolations(page);
  await page.getByLabel("New name").fill("");
  await clickAndLoad(page, page.getByRole("button", { name: "Save name" }));
  await expect(page.title()).resolves.toMatch(/^Error: /);
  await expect(page.getByRole("alert").getByRole("link").first().getAttribute("href")).resolves.toBe("#name");
  await expectNoSeriousAxeViolations(page);
  await page.getByLabel("New name").fill("Zapier (prod)");
  await clickAndLoad(page, page.getByRole("button", { name: "Save name" }));
  await page.waitForURL(/\/console\/keys$/);
  await expect(page.getByRole("status").innerText()).resolves.toContain('renamed to "Zapier (prod)"');

  // Revoke after a confirmation page.
  await clickAndLoad(page, page.getByRole("row", { name: /Zapier \(prod\)/ }).getByRole("link", { name: /Revoke/ }));
  await expect(page.getByRole("heading", { level: 1 }).innerText()).resolves.toBe('Revoke API key "Zapier (prod)"?');
  await expectNoSeriousAxeViolations(page);
  expect((await env.t.request("GET", "/v1/ext/me", undefined, key)).status).toBe(200);
  await clickAndLoad(page, page.getByRole("button", { name: "Revoke key" }));
  await page.waitForURL(/\/console\/keys$/);
  await expect(page.getByRole("row", { name: /Zapier \(prod\)/ }).innerText()).resolves.toContain("revoked");
  const after = await env.t.request("GET", "/v1/ext/me", undefined, key);
  expect(after.status).toBe(401);
  expect(after.body.code).toBe("invalid_api_key");

  const events = await env.t.server.ctx.prisma.auditEvent.findMany({ where: { companyId: env.t.companyId, targetType: "api_key" }, orderBy: { createdAt: "asc" } });
  expect(events.map((e) => [e.action, e.actorLabel])).toEqual([
    ["api_key.created", env.user.email],
    ["api_key.renamed", env.user.email],
    ["api_key.revoked", env.user.email],
  ]);
  expect(JSON.stringify(events)).not.toContain(key);

  // The audit log page lists them.
  await page.goto("/console/audit");
  await expect(page.getByRole("row", { name: /API key revoked/ }).innerText()).resolves.toContain(env.user.email);
  await expectNoSeriousAxeViolations(page);
  await page.context().close();
});

it("re-renders the create form with errors beside the fields and keeps what was typed", async () => {
  const page = await signIn(env.browser, env.t.url, env.user);
  await page.goto("/console/keys");
  for (const scope of ["items:read", "items:write", "tasks:read", "tasks:write", "hooks:manage"]) await page.getByLabel(scope).uncheck();
  await page.getByLabel("Name", { exact: true }).fill("No scopes");
  const response = await submitForm(page, page.getByRole("button", { name: "Create key" }));
  expect(response.status()).toBe(400);
  await expect(page.getByRole("alert").innerText()).resolves.toContain("Choose at least one scope.");
  await expect(page.getByLabel("Name", { exact: true }).inputValue()).resolves.toBe("No scopes");
  await expectNoSeriousAxeViolations(page);

  await page.getByLabel("items:read").check();
  await page.getByLabel("Expires on (optional)").fill("2020-01-01");
  await clickAndLoad(page, page.getByRole("button", { name: "Create key" }));
  await expect(page.getByRole("alert").innerText()).resolves.toContain("must be in the future");
  await expect(page.locator("#expires_on-error").innerText()).resolves.toContain("must be in the future");
  await expectNoSeriousAxeViolations(page);

  await page.getByLabel("Expires on (optional)").fill("2099-12-31");
  await clickAndLoad(page, page.getByRole("button", { name: "Create key" }));
  await page.waitForURL(/\/console\/keys$/);
  await expect(page.getByRole("row", { name: /No scopes/ }).innerText()).resolves.toContain("2099-12-31 23:59");
  expect(await env.t.server.ctx.prisma.apiKey.count({ where: { name: "No scopes", companyId: env.t.companyId } })).toBe(1);
  await page.context().close();
});

it("shows a member the key names, prefixes and statuses without any write control", async () => {
  await createApiKey(env.t.server.ctx.prisma, { companyId: env.t.companyId, name: "Old pilot", expiresAt: new Date(Date.now() - 60_000) });
  const member = await createConsoleUser(env.t, "member");
  const page = await signIn(env.browser, env.t.url, member);
  await page.goto("/console/keys");
  await expect(page.getByRole("row", { name: /Test key/ }).count()).resolves.toBe(1);
  await expect(page.getByRole("row", { name: /Old pilot/ }).innerText()).resolves.toMatch(/expired$/);
  await expect(page.getByRole("link", { name: /Revoke|Rename/ }).count()).resolves.toBe(0);
  await expect(page.getByRole("navigation", { name: "Console" }).getByRole("link").allInnerTexts()).resolves.toEqual(["API keys", "Webhooks", "Pipelines", "Connected apps", "Events", "Requests", "Your profile", "Two-factor sign-in"]);
  await expectNoSeriousAxeViolations(page);
  await page.context().close();
});
