/**
 * Two-factor sign-in in the console (issue 19 item 7), over HTTP and in a real headless Chromium: the password alone
 * gives a session that reaches nothing but the second step (every console route tried as an attacker), a code or a
 * recovery code completes sign-in, a used code cannot sign in again, wrong codes are rate-limited per account and
 * per IP, a company's requirement sends a user without two-factor to set it up before anything else, an owner's
 * reset, and the audit entries. The browser test reads the secret from the setup page and computes codes with the
 * same library the server uses (otpauth).
 */
import { Secret, TOTP } from "otpauth";
import type { Router } from "express";
import {
  acceptInviteOverHttp,
  BROWSER_TEST_TIMEOUT_MS,
  clickAndLoad,
  createConsoleUser,
  expectNoSeriousAxeViolations,
  submitForm,
  useConsoleTestServer,
  type ConsoleUser,
} from "./helpers/console-browser";
import { startTestServer } from "./helpers/test-server";
import { consoleRouter } from "../src/console";
import { SECOND_FACTOR_LIMITS } from "../src/console/failure-limits";
import { withinOneWindow } from "./helpers/fixed-window";
import { wrongCode } from "./helpers/totp";
import { createCompany } from "../src/services/companies";
import { beginSetup, confirmSetup, pendingSetup } from "../src/services/two-factor";
import { inviteUser } from "../src/services/users";

jest.setTimeout(BROWSER_TEST_TIMEOUT_MS);

const env = useConsoleTestServer("owner", () => startTestServer());
const db = () => env.t.server.ctx.prisma;

function totp(secret: string): TOTP {
  return new TOTP({ secret: Secret.fromBase32(secret.replace(/\s/g, "")), algorithm: "SHA1", digits: 6, period: 30 });
}

/**
 * A code of `secret` for a step not used yet: the current step's code, or, when `used` holds it (a code is accepted
 * once), the next step's (accepted within the ±1 window). `consume`: remember it as used.
 */
function freshCode(secret: string, used: Set<string>, consume = true): string {
  for (const offset of [0, 30_000]) {
    const code = totp(secret).generate({ timestamp: Date.now() + offset });
    if (!used.has(code)) {
      if (consume) used.add(code);
      return code;
    }
  }
  throw new Error("no fresh code");
}

/** Turns two-factor sign-in on for `user` through the services. @returns the secret, the recovery codes and the used codes. */
async function enableFor(user: ConsoleUser) {
  await beginSetup(db(), user.id);
  const { secret } = (await pendingSetup(db(), user.id))!;
  const used = new Set<string>();
  const codes = await confirmSetup(db(), user.id, freshCode(secret, used), { actor: { type: "cli" } });
  return { secret, recoveryCodes: codes, used };
}

/** A browser-less console client with a cookie jar, which keeps the last page's CSRF token for its next POST. */
class Client {
  cookies = new Map<string, string>();
  token = "";
  constructor(private readonly headers: Record<string, string> = {}) {}

  private cookieHeader() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  private keep(res: Response) {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";");
      const [name, ...rest] = pair!.split("=");
      const value = rest.join("=");
      if (value === "" || /Expires=Thu, 01 Jan 1970/.test(c)) this.cookies.delete(name!);
      else this.cookies.set(name!, value);
    }
  }

  async get(path: string) {
    const res = await fetch(env.t.url + path, { headers: { cookie: this.cookieHeader(), ...this.headers }, redirect: "manual" });
    this.keep(res);
    const text = await res.text();
    this.token = /name="_csrf" value="([^"]+)"/.exec(text)?.[1] ?? this.token;
    return { status: res.status, text, location: res.headers.get("location") };
  }

  async post(path: string, fields: Record<string, string>) {
    const res = await fetch(env.t.url + path, {
      method: "POST",
      headers: { cookie: this.cookieHeader(), origin: env.t.url, "content-type": "application/x-www-form-urlencoded", ...this.headers },
      body: new URLSearchParams({ _csrf: this.token, ...fields }),
      redirect: "manual",
    });
    this.keep(res);
    const text = await res.text();
    this.token = /name="_csrf" value="([^"]+)"/.exec(text)?.[1] ?? this.token;
    return { status: res.status, text, location: res.headers.get("location") };
  }

  /** The password step. @returns the POST's answer (303 to the second step for a user with two-factor sign-in). */
  async password(user: { email: string; password: string }) {
    await this.get("/console/sign-in");
    return this.post("/console/sign-in", { email: user.email, password: user.password });
  }

  /** The second step with `fields` (`code` or `recovery_code`), from its page. */
  async secondStep(fields: Record<string, string>) {
    await this.get("/console/sign-in/two-factor");
    return this.post("/console/sign-in/two-factor", fields);
  }
}

/** Every route of the console router as [method, path] (Express 5 router stack, sub-routers included). */
function consoleRoutes(): [string, string][] {
  const out: [string, string][] = [];
  const walk = (stack: unknown[]) => {
    for (const layer of stack as { route?: { path: string; methods: Record<string, boolean> }; handle?: { stack?: unknown[] } }[]) {
      if (layer.route) for (const method of Object.keys(layer.route.methods)) out.push([method.toUpperCase(), layer.route.path]);
      else if (layer.handle?.stack) walk(layer.handle.stack);
    }
  };
  walk((consoleRouter(env.t.server.ctx) as Router & { stack: unknown[] }).stack);
  return out;
}

/** Routes a session pending its second factor may reach (nothing else of the console). */
const PUBLIC = new Set(["GET /sign-in", "POST /sign-in", "POST /sign-out", "GET /sign-in/two-factor", "POST /sign-in/two-factor", "GET /invite/:token", "POST /invite/:token"]);

describe("the second step", () => {
  it("gives the password alone a session that reaches nothing but the second step, on every console route", async () => {
    const user = await createConsoleUser(env.t, "owner");
    await enableFor(user);
    const client = new Client();
    const step1 = await client.password(user);
    expect(step1.status).toBe(303);
    expect(step1.location).toBe("/console/sign-in/two-factor?next=%2Fconsole%2F");
    const pendingCookie = client.cookies.get("stageline.session");
    expect(pendingCookie).toBeDefined();
    const page = await client.get("/console/sign-in/two-factor");
    expect(page.status).toBe(200);
    expect(page.text).toContain('<label for="code">Authentication code</label>');
    expect(page.text).not.toContain(user.email); // not signed in: no header with the user

    const routes = consoleRoutes();
    expect(routes.length).toBeGreaterThan(30);
    const tried: string[] = [];
    for (const [method, path] of routes) {
      if (PUBLIC.has(`${method} ${path}`)) continue;
      const concrete = path.replace(/:(\w+)/g, "00000000-0000-7000-8000-000000000000");
      const res = method === "GET" ? await client.get(`/console${concrete}`) : await client.post(`/console${concrete}`, { name: "x", role: "owner", code: "123456" });
      tried.push(`${method} ${path} ${res.status}`);
      expect({ route: `${method} ${path}`, status: res.status, location: res.location?.split("?")[0] }).toEqual({
        route: `${method} ${path}`,
        status: 303,
        location: "/console/sign-in/two-factor",
      });
      expect(client.cookies.get("stageline.session")).toBe(pendingCookie); // still pending, not promoted
    }
    expect(tried.some((r) => r.startsWith("POST /keys "))).toBe(true);
    expect(tried.some((r) => r.startsWith("GET /two-factor "))).toBe(true);
    expect(tried.some((r) => r.startsWith("POST /team/users/:userId/reset-two-factor "))).toBe(true);
    // Nothing was changed by those requests.
    expect(await db().apiKey.count({ where: { companyId: user.companyId, name: "x" } })).toBe(0);
  }, 120_000);

  it("signs in with a code (to a new session id), and the same code does not sign in again", async () => {
    const user = await createConsoleUser(env.t, "admin");
    const { secret, used } = await enableFor(user);
    const client = new Client();
    await client.password(user);
    const pending = client.cookies.get("stageline.session");
    const code = freshCode(secret, used);
    const done = await client.secondStep({ code, next: "/console/audit" });
    expect(done).toMatchObject({ status: 303, location: "/console/audit" });
    expect(client.cookies.get("stageline.session")).not.toBe(pending);
    expect((await client.get("/console/keys")).status).toBe(200);
    expect(await db().consoleSession.findMany({ where: { userId: user.id, secondFactorPending: true } })).toHaveLength(0);

    // The pending cookie no longer works, and a replay of the code in another sign-in is refused.
    const attacker = new Client();
    await attacker.password(user);
    const replay = await attacker.secondStep({ code });
    expect(replay.status).toBe(401);
    expect(replay.text).toContain("The code is not correct.");
    expect((await attacker.get("/console/keys")).location).toMatch(/^\/console\/sign-in\/two-factor/);

    const succeeded = await db().auditEvent.findMany({ where: { targetId: user.id, action: "sign_in.succeeded" } });
    expect(succeeded.map((e) => e.details)).toEqual([{ second_factor: "totp" }]);
    expect(await db().auditEvent.count({ where: { targetId: user.id, action: "sign_in.second_factor_failed" } })).toBe(1);
  });

  it("signs in once with each recovery code", async () => {
    const user = await createConsoleUser(env.t, "member");
    const { recoveryCodes } = await enableFor(user);
    const first = new Client();
    await first.password(user);
    expect((await first.secondStep({ recovery_code: recoveryCodes[0]! })).status).toBe(303);
    expect((await first.get("/console/keys")).status).toBe(200);
    const second = new Client();
    await second.password(user);
    const again = await second.secondStep({ recovery_code: recoveryCodes[0]! });
    expect(again.status).toBe(401);
    expect(again.text).toContain('id="recovery-code-error"');
    const used = await db().auditEvent.findFirstOrThrow({ where: { targetId: user.id, action: "two_factor.recovery_code_used" } });
    expect(used.details).toEqual({ recovery_codes_left: 9 });
  });

  it(`refuses an account after ${SECOND_FACTOR_LIMITS.perAccount} wrong codes (even the right one), and an IP after ${SECOND_FACTOR_LIMITS.perIp}`, async () => {
    await withinOneWindow(SECOND_FACTOR_LIMITS.windowMs, async (attempt) => {
      const user = await createConsoleUser(env.t, "member");
      const { secret, used } = await enableFor(user);
      for (let i = 0; i < SECOND_FACTOR_LIMITS.perAccount; i++) {
        const client = new Client({ "x-forwarded-for": `198.51.${100 + attempt}.${i + 1}` });
        await client.password(user);
        expect((await client.secondStep({ code: wrongCode(secret) })).status).toBe(401);
      }
      const client = new Client({ "x-forwarded-for": `198.51.${100 + attempt}.99` });
      await client.password(user);
      const blocked = await client.secondStep({ code: freshCode(secret, used, false) }); // a valid code, never checked
      return async () => {
        expect(blocked.status).toBe(429);
        expect(blocked.text).toContain("Too many wrong codes.");
        expect((await client.get("/console/keys")).status).toBe(303);
      };
    });

    // Per IP: wrong codes for many accounts from one address.
    await withinOneWindow(SECOND_FACTOR_LIMITS.windowMs, async (attempt) => {
      const ip = { "x-forwarded-for": `203.0.${113 + attempt}.50` };
      const others = await Promise.all([1, 2, 3].map(() => createConsoleUser(env.t, "member")));
      const secrets: string[] = [];
      for (const other of others) secrets.push((await enableFor(other)).secret);
      const fresh = await createConsoleUser(env.t, "member");
      const f = await enableFor(fresh);
      for (let i = 0; i < SECOND_FACTOR_LIMITS.perIp; i++) {
        const c = new Client(ip);
        await c.password(others[i % others.length]!);
        // Beyond the per-account limit the account is refused too; the IP's counter still grows.
        expect([401, 429]).toContain((await c.secondStep({ code: wrongCode(secrets[i % others.length]!) })).status);
      }
      const fromIp = new Client(ip);
      await fromIp.password(fresh);
      const refused = await fromIp.secondStep({ code: freshCode(f.secret, f.used, false) });
      return async () => {
        expect(refused.status).toBe(429);
        const elsewhere = new Client({ "x-forwarded-for": `203.0.${113 + attempt}.51` });
        await elsewhere.password(fresh);
        expect((await elsewhere.secondStep({ code: freshCode(f.secret, f.used) })).status).toBe(303);
      };
    });
  }, 240_000);
});

describe("a pending second step and an invitation in the same browser", () => {
  it("accepting the invitation ends the pending session, as sign-in does", async () => {
    const owner = await createConsoleUser(env.t, "owner");
    await enableFor(owner);
    const client = new Client();
    expect((await client.password(owner)).status).toBe(303);
    const pending = `stageline.session=${client.cookies.get("stageline.session")}`;
    const pendingRows = await db().consoleSession.count({ where: { userId: owner.id, secondFactorPending: true } });
    expect(pendingRows).toBe(1);
    const { token } = await inviteUser(db(), owner.companyId, { email: `joiner-${Date.now()}@acme.example`, role: "member" }, { actor: { type: "user", id: owner.id, email: owner.email } });
    const accepted = await acceptInviteOverHttp(env.t.url, token, "violet harbor lantern quiz", pending);
    expect(accepted.status).toBe(303);
    expect(await db().consoleSession.count({ where: { userId: owner.id, secondFactorPending: true } })).toBe(0);
  });
});

describe("company requirement and reset", () => {
  it("sends a user without two-factor to set it up before anything else; an owner's reset signs them out and is audited", async () => {
    const company = await createCompany(db(), { name: `Strict ${Date.now()}` });
    const owner = await createConsoleUser(env.t, "owner", company.id);
    const member = await createConsoleUser(env.t, "member", company.id);
    const ownerTf = await enableFor(owner);
    const ownerClient = new Client();
    await ownerClient.password(owner);
    expect((await ownerClient.secondStep({ code: freshCode(ownerTf.secret, ownerTf.used) })).status).toBe(303);
    await ownerClient.get("/console/two-factor");
    expect((await ownerClient.post("/console/two-factor/requirement", { require_two_factor: "on" })).status).toBe(303);

    // The member signs in with the password and reaches nothing but the two-factor page (and sign-out).
    const memberClient = new Client();
    expect((await memberClient.password(member)).location).toBe("/console/");
    for (const path of ["/console/", "/console/keys", "/console/pipelines", "/console/webhooks", "/console/nope"]) {
      expect(await memberClient.get(path)).toMatchObject({ status: 303, location: "/console/two-factor" });
    }
    const page = await memberClient.get("/console/two-factor");
    expect(page.status).toBe(200);
    expect(page.text).toContain("requires two-factor sign-in");
    await memberClient.post("/console/two-factor/setup", {});
    const setup = await memberClient.get("/console/two-factor");
    const secret = /id="totp-secret"[^>]*value="([A-Z2-7 ]+)"/.exec(setup.text)![1]!;
    const used = new Set<string>();
    expect((await memberClient.post("/console/two-factor/confirm", { code: freshCode(secret, used) })).status).toBe(303);
    expect((await memberClient.get("/console/keys")).status).toBe(200);

    // The owner sees it on the Team page and resets it; the member's sessions end.
    const team = await ownerClient.get("/console/team");
    expect(team.text).toContain(`Reset two-factor<span class="visually-hidden"> of ${member.email}</span>`);
    expect((await ownerClient.post(`/console/team/users/${member.id}/reset-two-factor`, {})).status).toBe(303);
    expect((await memberClient.get("/console/keys")).location).toMatch(/^\/console\/sign-in/);
    // Another company's owner gets 404 for this member.
    const outsider = new Client();
    await outsider.password(env.user);
    expect((await outsider.get("/console/team")).status).toBe(200);
    expect((await outsider.post(`/console/team/users/${owner.id}/reset-two-factor`, {})).status).toBe(404);

    const audit = await ownerClient.get("/console/audit");
    for (const phrase of ["Two-factor requirement changed", "Two-factor sign-in turned on", "Two-factor sign-in reset"]) expect(audit.text).toContain(phrase);
    const events = await db().auditEvent.findMany({ where: { companyId: company.id }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
    expect(events.map((e) => `${e.action} ${e.actorLabel}`)).toEqual(
      expect.arrayContaining([
        `company.two_factor_requirement_changed ${owner.email}`,
        `two_factor.enabled ${member.email}`,
        `two_factor.reset ${owner.email}`,
      ]),
    );
  }, 60_000);
});

describe("in a browser", () => {
  it("sets up two-factor from the page's secret, shows the recovery codes once, and signs in again with a code", async () => {
    const user = await createConsoleUser(env.t, "admin");
    const context = await env.browser.newContext({ baseURL: env.t.url });
    const page = await context.newPage();
    await page.goto("/console/sign-in");
    await page.getByLabel("Email address").fill(user.email);
    await page.getByLabel("Password").fill(user.password);
    await Promise.all([page.waitForURL(/\/console\/keys$/), page.getByRole("button", { name: "Sign in" }).click()]);

    await clickAndLoad(page, page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Two-factor sign-in" }));
    await expect(page.getByRole("heading", { level: 1, name: "Two-factor sign-in" }).isVisible()).resolves.toBe(true);
    await submitForm(page, page.getByRole("button", { name: "Set up two-factor sign-in" }));
    await expect(page.getByRole("img", { name: /QR code/ }).isVisible()).resolves.toBe(true);
    await expectNoSeriousAxeViolations(page);
    const secret = await page.getByLabel("Secret key").inputValue();
    expect(secret.replace(/\s/g, "")).toMatch(/^[A-Z2-7]{32}$/);
    const used = new Set<string>();
    await page.getByLabel("Authentication code").fill(freshCode(secret, used));
    expect((await submitForm(page, page.getByRole("button", { name: "Turn on two-factor sign-in" }))).status()).toBe(303);
    const codes = (await page.getByLabel("Recovery codes (each works once)").inputValue()).split(" ");
    expect(codes).toHaveLength(10);
    await expect(page.getByText(/Two-factor sign-in is\s+on\s+since/).isVisible()).resolves.toBe(true);
    await expectNoSeriousAxeViolations(page);
    // Shown once: the next page has neither the codes nor the secret.
    await page.goto("/console/two-factor");
    const html = await page.content();
    expect(html).not.toContain(codes[0]);
    expect(html).not.toContain(secret);

    await submitForm(page, page.getByRole("button", { name: "Sign out" }));
    await page.goto("/console/sign-in");
    await page.getByLabel("Email address").fill(user.email);
    await page.getByLabel("Password").fill(user.password);
    await Promise.all([page.waitForURL(/\/console\/sign-in\/two-factor/), page.getByRole("button", { name: "Sign in" }).click()]);
    await expectNoSeriousAxeViolations(page);
    await page.getByLabel("Authentication code").fill(wrongCode(secret));
    expect((await submitForm(page, page.getByRole("button", { name: "Verify" }))).status()).toBe(401);
    await expect(page.getByRole("alert").innerText()).resolves.toContain("The code is not correct.");
    await expectNoSeriousAxeViolations(page);
    await page.getByLabel("Authentication code").fill(freshCode(secret, used));
    await Promise.all([page.waitForURL(/\/console\/keys$/), page.getByRole("button", { name: "Verify" }).click()]);
    await expect(page.getByRole("heading", { level: 1, name: "API keys" }).isVisible()).resolves.toBe(true);
    await context.close();
  }, BROWSER_TEST_TIMEOUT_MS);
});
