/**
 * The console's sign-in, sessions and guards in a real headless Chromium (helpers/console-env.browser.ts): sign in,
 * sign-out ends the session, a member's write is refused (403), another company's key by URL is 404, a forged
 * cross-site POST is 403 and changes nothing, sign-in errors and rate limiting, and axe-core on the pages.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { BROWSER_TEST_TIMEOUT_MS, clickAndLoad, createConsoleUser, expectNoSeriousAxeViolations, signIn, submitForm, useConsoleTestServer } from "./helpers/console-browser";
import { startTestServer } from "./helpers/test-server";
import { SIGN_IN_FAILED } from "../src/services/console-sessions";

jest.setTimeout(BROWSER_TEST_TIMEOUT_MS);

const env = useConsoleTestServer("owner", () => startTestServer());

describe("sign-in", () => {
  it("signs in with email (any case) and password, lands on the keys page, and sends secure headers", async () => {
    const context = await env.browser.newContext({ baseURL: env.t.url });
    const page = await context.newPage();
    const first = await page.goto("/console/");
    expect(page.url()).toContain("/console/sign-in");
    const headers = first!.headers();
    expect(headers["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(headers["content-security-policy"]).toContain("script-src 'self'");
    expect(headers["content-security-policy"]).not.toContain("unsafe-inline");
    expect(headers["x-content-type-options"]).toBe("nosniff");
    expect(headers["referrer-policy"]).toBe("same-origin");
    await expectNoSeriousAxeViolations(page);
    await page.getByLabel("Email address").fill(env.user.email.toUpperCase());
    await page.getByLabel("Password").fill(env.user.password);
    await clickAndLoad(page, page.getByRole("button", { name: "Sign in" }));
    await page.waitForURL(/\/console\/keys$/);
    await expect(page.getByRole("heading", { level: 1, name: "API keys" }).isVisible()).resolves.toBe(true);
    const cookie = (await context.cookies()).find((c) => c.name === "stageline.session")!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Lax", path: "/" });
    // Only the hash of the session id is stored.
    const rows = await env.t.server.ctx.prisma.consoleSession.findMany({ where: { userId: env.user.id } });
    expect(rows.map((r) => r.idHash)).not.toContain(cookie.value);
    expect(rows.length).toBeGreaterThan(0);
    await context.close();
  });

  it("gives the same error for an unknown email and a wrong password, with an error summary linked to the field", async () => {
    const context = await env.browser.newContext({ baseURL: env.t.url });
    const page = await context.newPage();
    const texts: string[] = [];
    for (const [email, password] of [[env.user.email, "wrong password 123"], ["nobody@example.test", "wrong password 123"]] as const) {
      await page.goto("/console/sign-in");
      await page.getByLabel("Email address").fill(email);
      await page.getByLabel("Password").fill(password);
      const response = await submitForm(page, page.getByRole("button", { name: "Sign in" }));
      expect(response.status()).toBe(401);
      await expect(page.title()).resolves.toMatch(/^Error: Sign in/);
      const summary = page.getByRole("alert");
      texts.push((await summary.innerText()).trim());
      await expect(summary.getByRole("link", { name: SIGN_IN_FAILED }).getAttribute("href")).resolves.toBe("#email");
      await expectNoSeriousAxeViolations(page);
    }
    expect(texts[0]).toBe(texts[1]);
    const failed = await env.t.server.ctx.prisma.auditEvent.findMany({ where: { companyId: env.t.companyId, action: "sign_in.failed" } });
    expect(failed.length).toBeGreaterThanOrEqual(1);
    await context.close();
  });

  it("issues a new session id at sign-in (a planted cookie is not adopted) and ends the previous session", async () => {
    const context = await env.browser.newContext({ baseURL: env.t.url });
    await context.addCookies([{ name: "stageline.session", value: "attacker-chosen-id", url: env.t.url }]);
    const page = await context.newPage();
    await page.goto("/console/sign-in");
    await page.getByLabel("Email address").fill(env.user.email);
    await page.getByLabel("Password").fill(env.user.password);
    await Promise.all([page.waitForURL(/\/console\/keys$/), page.getByRole("button", { name: "Sign in" }).click()]);
    const first = (await context.cookies()).find((c) => c.name === "stageline.session")!.value;
    expect(first).not.toBe("attacker-chosen-id");
    expect(first).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // Signing in again from the same env.browser makes another id and deletes the first session.
    const token = await page.locator('input[name="_csrf"]').first().inputValue();
    await page.evaluate(
      async ({ csrf, email, password }) => {
        await fetch("/console/sign-in", { method: "POST", body: new URLSearchParams({ _csrf: csrf, email, password }) });
      },
      { csrf: token, email: env.user.email, password: env.user.password },
    );
    const second = (await context.cookies()).find((c) => c.name === "stageline.session")!.value;
    expect(second).not.toBe(first);
    const replay = await fetch(`${env.t.url}/console/keys`, { headers: { cookie: `stageline.session=${first}` }, redirect: "manual" });
    expect(replay.status).toBe(303);
    await context.close();
  });
});

describe("sign-out", () => {
  it("ends the session: the old cookie no longer opens a page", async () => {
    const page = await signIn(env.browser, env.t.url, env.user);
    const cookie = (await page.context().cookies()).find((c) => c.name === "stageline.session")!;
    await clickAndLoad(page, page.getByRole("button", { name: "Sign out" }));
    await page.waitForURL(/\/console\/sign-in$/);
    const replay = await fetch(`${env.t.url}/console/keys`, { headers: { cookie: `stageline.session=${cookie.value}` }, redirect: "manual" });
    expect(replay.status).toBe(303);
    expect(replay.headers.get("location")).toContain("/console/sign-in");
    await page.context().close();
  });
});

describe("guards", () => {
  it("refuses a member's write with 403 (and the page shows no write controls)", async () => {
    const member = await createConsoleUser(env.t, "member");
    const page = await signIn(env.browser, env.t.url, member);
    await page.goto("/console/keys");
    await expect(page.getByRole("button", { name: "Create key" }).count()).resolves.toBe(0);
    const token = await page.locator('input[name="_csrf"]').first().inputValue();
    const before = await env.t.server.ctx.prisma.apiKey.count();
    const status = await page.evaluate(async (csrf) => {
      const res = await fetch("/console/keys", { method: "POST", body: new URLSearchParams({ _csrf: csrf, name: "Sneaky", scopes: "items:read" }) });
      return res.status;
    }, token);
    expect(status).toBe(403);
    const rename = await page.goto(`/console/keys/${env.t.keyId}/rename`);
    expect(rename!.status()).toBe(403);
    await expect(page.getByRole("heading", { level: 1 }).innerText()).resolves.toBe("You cannot do this");
    await expectNoSeriousAxeViolations(page);
    expect(await env.t.server.ctx.prisma.apiKey.count()).toBe(before);
    const audit = await page.goto("/console/audit");
    expect(audit!.status()).toBe(403);
    await page.context().close();
  });

  it("answers 404 for another company's key by URL", async () => {
    const other = await env.t.newCompany("Other Co");
    const otherKey = await env.t.server.ctx.prisma.apiKey.findFirstOrThrow({ where: { companyId: other.companyId } });
    const page = await signIn(env.browser, env.t.url, env.user);
    for (const action of ["rename", "revoke"]) {
      const res = await page.goto(`/console/keys/${otherKey.id}/${action}`);
      expect(res!.status()).toBe(404);
      await expect(page.getByRole("heading", { level: 1 }).innerText()).resolves.toBe("Page not found");
    }
    await expectNoSeriousAxeViolations(page);
    const token = await page.locator('input[name="_csrf"]').first().inputValue();
    const status = await page.evaluate(async ({ csrf, id }) => {
      const res = await fetch(`/console/keys/${id}/revoke`, { method: "POST", body: new URLSearchParams({ _csrf: csrf }) });
      return res.status;
    }, { csrf: token, id: otherKey.id });
    expect(status).toBe(404);
    const after = await env.t.server.ctx.prisma.apiKey.findUniqueOrThrow({ where: { id: otherKey.id } });
    expect(after.revokedAt).toBeNull();
    await page.context().close();
  });

  it("shows a stale form's 403 page with a working sign-out button", async () => {
    const page = await signIn(env.browser, env.t.url, env.user);
    await page.goto(`/console/keys/${env.t.keyId}/rename`);
    // The form's token went stale (e.g. the page was left open while the CSRF cookie changed).
    await page.locator('form input[name="_csrf"]').last().evaluate((input) => input.setAttribute("value", "stale"));
    const refused = await submitForm(page, page.getByRole("button", { name: "Save name" }));
    expect(refused.status()).toBe(403);
    await expect(page.getByRole("heading", { level: 1 }).innerText()).resolves.toBe("You cannot do this");
    expect(await page.locator('form.sign-out input[name="_csrf"]').inputValue()).not.toBe("");
    await clickAndLoad(page, page.getByRole("button", { name: "Sign out" }));
    await page.waitForURL(/\/console\/sign-in/);
    expect((await page.goto("/console/keys"))!.url()).toMatch(/\/console\/sign-in/);
    await page.context().close();
  });

  it("refuses a forged cross-site POST with 403 and changes nothing", async () => {
    const page = await signIn(env.browser, env.t.url, env.user);
    // An attacker's page on another origin (localhost vs 127.0.0.1) that posts a revoke form to the console.
    const evil = http.createServer((_req, res) => {
      res.setHeader("content-type", "text/html");
      res.end(`<!doctype html><title>Win a prize</title><form method="post" action="${env.t.url}/console/keys/${env.t.keyId}/revoke">
        <input type="hidden" name="_csrf" value="guessed"><button>Claim</button></form>`);
    });
    await new Promise<void>((resolve) => evil.listen(0, "127.0.0.1", resolve));
    const evilUrl = `http://localhost:${(evil.address() as AddressInfo).port}/`;
    try {
      await page.goto(evilUrl);
      // submitForm waits for the 403 page to load, so the goto below never races the form's navigation
      const response = await submitForm(page, page.getByRole("button", { name: "Claim" }));
      expect(response.url()).toContain("/revoke");
      expect(response.status()).toBe(403);
      // Same-origin request with the session cookie but a foreign Origin header: refused too.
      const cookies = await page.context().cookies(env.t.url);
      const cookieHeader = cookies.map((c) => `${c.name}=${c.value}`).join("; ");
      await page.goto("/console/keys");
      const token = await page.locator('input[name="_csrf"]').first().inputValue();
      const forged = await fetch(`${env.t.url}/console/keys/${env.t.keyId}/revoke`, {
        method: "POST",
        headers: { cookie: cookieHeader, origin: "http://evil.example", "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ _csrf: token }),
        redirect: "manual",
      });
      expect(forged.status).toBe(403);
      // Right origin, no CSRF token: refused.
      const tokenless = await fetch(`${env.t.url}/console/keys/${env.t.keyId}/revoke`, {
        method: "POST",
        headers: { cookie: cookieHeader, origin: env.t.url, "content-type": "application/x-www-form-urlencoded" },
        body: "",
        redirect: "manual",
      });
      expect(tokenless.status).toBe(403);
      const key = await env.t.server.ctx.prisma.apiKey.findUniqueOrThrow({ where: { id: env.t.keyId } });
      expect(key.revokedAt).toBeNull();
      expect((await env.t.request("GET", "/v1/ext/me")).status).toBe(200);
    } finally {
      evil.close();
      await page.context().close();
    }
  });
});
