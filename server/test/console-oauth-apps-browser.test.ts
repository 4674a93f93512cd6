/**
 * "Developer apps" and "Connected apps" (issue 32) in a real headless Chromium, driven by role and label: an admin
 * registers a confidential app (the client secret shown once with a copy button, gone after a reload), sees a form
 * error beside its field, revokes a connected app after the confirmation page and deletes the app; axe-core on every
 * page. The access rules, CSRF and storage checks are over HTTP in console-oauth-apps.test.ts.
 */
import crypto from "node:crypto";
import { BROWSER_TEST_TIMEOUT_MS, clickAndLoad, expectNoSeriousAxeViolations, signIn, submitForm, useConsoleTestServer } from "./helpers/console-browser";
import { startTestServer } from "./helpers/test-server";

jest.setTimeout(BROWSER_TEST_TIMEOUT_MS);

const env = useConsoleTestServer("admin", () => startTestServer());

it("registers an app (secret shown once), revokes a connection to it after confirming, then deletes it", async () => {
  const page = await signIn(env.browser, env.t.url, env.user);
  await clickAndLoad(page, page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Developer apps" }));
  await expect(page.getByRole("heading", { level: 1 }).innerText()).resolves.toBe("Developer apps");
  await expectNoSeriousAxeViolations(page);

  // A redirect URI over plain http to a public host is refused beside its field, keeping what was typed.
  await page.getByLabel("App name").fill("Acme <sync>");
  await page.getByLabel("Redirect URIs").fill("http://acme.example/callback");
  await page.getByLabel(/^Confidential/).check();
  const refused = await submitForm(page, page.getByRole("button", { name: "Register app" }));
  expect(refused.status()).toBe(400);
  await expect(page.getByRole("alert").getByRole("link").first().getAttribute("href")).resolves.toBe("#redirect_uris");
  await expect(page.locator("#redirect_uris-error").innerText()).resolves.toContain("use https");
  await expect(page.getByLabel("App name").inputValue()).resolves.toBe("Acme <sync>");
  await expectNoSeriousAxeViolations(page);

  await page.getByLabel("Redirect URIs").fill("https://acme.example/callback\nhttp://127.0.0.1:8765/cb");
  await clickAndLoad(page, page.getByRole("button", { name: "Register app" }));
  await page.waitForURL(/\/console\/developer-apps$/);
  const secret = await page.getByLabel("Client secret", { exact: true }).inputValue();
  expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect(page.url()).not.toContain(secret);
  await expect(page.getByRole("button", { name: "Copy" }).isVisible()).resolves.toBe(true);
  const row = page.getByRole("row", { name: /Acme <sync>/ });
  await expect(row.innerText()).resolves.toMatch(/sl_app_\S+\s+confidential\s+https:\/\/acme\.example\/callback\s+http:\/\/127\.0\.0\.1:8765\/cb/);
  await expectNoSeriousAxeViolations(page);
  await page.goto(page.url());
  await expect(page.getByLabel("Client secret", { exact: true }).count()).resolves.toBe(0);
  expect(await page.content()).not.toContain(secret);

  // Someone connects the app (the grant as the authorization server stores it), then the admin revokes it.
  const client = await env.t.server.ctx.prisma.oAuthRecord.findFirstOrThrow({ where: { model: "Client", companyId: env.t.companyId } });
  const grantId = crypto.randomBytes(16).toString("base64url");
  const accessHash = crypto.createHash("sha256").update("an-access-token").digest("base64url");
  await env.t.server.ctx.prisma.oAuthRecord.createMany({
    data: [
      {
        model: "Grant",
        id: grantId,
        grantId,
        clientId: client.id,
        companyId: env.t.companyId,
        payload: { kind: "Grant", jti: grantId, accountId: env.user.id, clientId: client.id, openid: { scope: "openid offline_access" }, resources: { [`${env.t.url}/v1/ext`]: "items:read" } },
      },
      { model: "AccessToken", id: accessHash, grantId, clientId: client.id, companyId: env.t.companyId, expiresAt: new Date(Date.now() + 3600_000), payload: { grantId, accountId: env.user.id, scope: "items:read" } },
    ],
  });
  await clickAndLoad(page, page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Connected apps" }));
  const connected = page.getByRole("row", { name: /Acme <sync>/ });
  await expect(connected.innerText()).resolves.toMatch(new RegExp(`items:read, offline_access\\s+${env.user.email.replace(/[.]/g, "\\.")}\\s+\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2} UTC\\s+Never`));
  await expectNoSeriousAxeViolations(page);
  await clickAndLoad(page, connected.getByRole("link", { name: /Revoke/ }));
  await expect(page.getByRole("heading", { level: 1 }).innerText()).resolves.toBe('Revoke access of "Acme <sync>"?');
  await expectNoSeriousAxeViolations(page);
  await clickAndLoad(page, page.getByRole("button", { name: "Revoke access" }));
  await page.waitForURL(/\/console\/connected-apps$/);
  await expect(page.getByRole("status").innerText()).resolves.toContain('Access of "Acme <sync>" revoked');
  await expect(page.getByRole("row", { name: /Acme <sync>/ }).count()).resolves.toBe(0);
  expect(await env.t.server.ctx.prisma.oAuthRecord.count({ where: { grantId } })).toBe(0);

  // Delete the app after its confirmation page.
  await page.goto("/console/developer-apps");
  await clickAndLoad(page, page.getByRole("row", { name: /Acme <sync>/ }).getByRole("link", { name: /Delete/ }));
  await expect(page.getByRole("heading", { level: 1 }).innerText()).resolves.toBe('Delete app "Acme <sync>"?');
  await expectNoSeriousAxeViolations(page);
  await clickAndLoad(page, page.getByRole("button", { name: "Delete app" }));
  await page.waitForURL(/\/console\/developer-apps$/);
  await expect(page.getByText("No app is registered yet.").isVisible()).resolves.toBe(true);

  await page.goto("/console/audit");
  for (const action of ["Developer app registered", "Connected app revoked", "Developer app deleted"]) {
    await expect(page.getByRole("row", { name: new RegExp(action) }).count()).resolves.toBe(1);
  }
  expect(await page.content()).not.toContain(secret);
  await page.context().close();
});
