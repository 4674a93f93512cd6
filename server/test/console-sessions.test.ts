/**
 * Console sessions, sign-in limits and the audit log, below the browser: session ids stored hashed, idle (12 h)
 * and absolute (7 days) expiry, sessions in the database (a second server process on the same PostgreSQL sees
 * them), sign-in failures rate-limited per account and per IP, `Secure` + `__Host-` cookies behind a TLS proxy,
 * and the audit log's keyset pagination.
 */
import crypto from "node:crypto";
import { acceptInviteOverHttp, signInOverHttp } from "./helpers/console-browser";
import { createConsoleUser, type ConsoleUser } from "./helpers/console-browser";
import { startTestServer, testConfig, type TestServer } from "./helpers/test-server";
import { startServer } from "../src/server";
import { listAudit, recordAudit } from "../src/services/audit-log";
import { inviteUser } from "../src/services/users";
import {
  SESSION_ABSOLUTE_MS,
  SESSION_IDLE_MS,
  deleteExpiredSessions,
  hashSessionId,
  resolveSession,
  signIn,
} from "../src/services/console-sessions";
import { SIGN_IN_LIMITS } from "../src/console/pages/sign-in";
import { withinOneWindow } from "./helpers/fixed-window";

let t: TestServer;
let owner: ConsoleUser;

beforeAll(async () => {
  t = await startTestServer();
  owner = await createConsoleUser(t, "owner");
});

afterAll(async () => {
  await t?.close();
});

describe("sessions", () => {
  it("stores only the SHA-256 of the session id and resolves the signed-in user with the company", async () => {
    const result = (await signIn(t.server.ctx.prisma, { email: owner.email, password: owner.password, ip: "192.0.2.1" }))!;
    expect(result.sessionId).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const row = await t.server.ctx.prisma.consoleSession.findUniqueOrThrow({ where: { idHash: hashSessionId(result.sessionId) } });
    expect(row.idHash).toBe(crypto.createHash("sha256").update(result.sessionId).digest("hex"));
    expect(await t.server.ctx.prisma.consoleSession.findUnique({ where: { idHash: result.sessionId } })).toBeNull();
    const session = await resolveSession(t.server.ctx.prisma, result.sessionId);
    expect(session?.user).toEqual({
      id: owner.id,
      email: owner.email,
      role: "owner",
      twoFactorEnabled: false,
      company: { id: t.companyId, name: "Acme Test", requireTwoFactor: false },
    });
    expect(session?.secondFactorPending).toBe(false);
  });

  it("ends a session after 12 hours without a request, and a used one after 7 days", async () => {
    const start = new Date("2030-01-01T00:00:00Z");
    const idle = (await signIn(t.server.ctx.prisma, { email: owner.email, password: owner.password, ip: null }, start))!;
    expect(await resolveSession(t.server.ctx.prisma, idle.sessionId, new Date(start.getTime() + SESSION_IDLE_MS - 1000))).not.toBeNull();
    // Activity moved last_seen forward: 12 h after that last request it has expired, not before.
    const lastSeen = start.getTime() + SESSION_IDLE_MS - 1000;
    expect(await resolveSession(t.server.ctx.prisma, idle.sessionId, new Date(lastSeen + SESSION_IDLE_MS - 1000))).not.toBeNull();
    expect(await resolveSession(t.server.ctx.prisma, idle.sessionId, new Date(lastSeen + 2 * SESSION_IDLE_MS))).toBeNull();
    expect(await t.server.ctx.prisma.consoleSession.findUnique({ where: { idHash: hashSessionId(idle.sessionId) } })).toBeNull();

    const busy = (await signIn(t.server.ctx.prisma, { email: owner.email, password: owner.password, ip: null }, start))!;
    let now = start.getTime();
    while (now + 6 * 3600_000 < start.getTime() + SESSION_ABSOLUTE_MS) {
      now += 6 * 3600_000;
      expect(await resolveSession(t.server.ctx.prisma, busy.sessionId, new Date(now))).not.toBeNull();
    }
    expect(await resolveSession(t.server.ctx.prisma, busy.sessionId, new Date(start.getTime() + SESSION_ABSOLUTE_MS))).toBeNull();
  });

  it("deletes expired sessions in housekeeping", async () => {
    const old = new Date("2020-01-01T00:00:00Z");
    await signIn(t.server.ctx.prisma, { email: owner.email, password: owner.password, ip: null }, old);
    expect(await deleteExpiredSessions(t.server.ctx.prisma)).toBeGreaterThanOrEqual(1);
    expect(await t.server.ctx.prisma.consoleSession.count({ where: { createdAt: old } })).toBe(0);
  });

  it("survives in the database: a second server process on the same database accepts the session", async () => {
    if (t.server.db.kind !== "postgres") return; // PGlite is one process; the second-process case needs PostgreSQL
    const signedIn = await signInOverHttp(t.url, owner.email, owner.password);
    const second = await startServer(testConfig({ databaseUrl: t.server.ctx.config.databaseUrl }));
    try {
      const res = await fetch(`${second.url}/console/keys`, { headers: { cookie: signedIn.cookie! }, redirect: "manual" });
      expect(res.status).toBe(200);
    } finally {
      await second.close();
    }
  });

  it("sets Secure __Host- cookies when a trusted proxy says the request came over https", async () => {
    const https = { "x-forwarded-proto": "https", origin: t.url.replace("http:", "https:") };
    const res = await signInOverHttp(t.url, owner.email, owner.password, https);
    expect(res.status).toBe(303);
    expect(res.cookie).toMatch(/^__Host-stageline\.session=/);
    const page = await fetch(`${t.url}/console/keys`, { headers: { cookie: res.cookie!, "x-forwarded-proto": "https" }, redirect: "manual" });
    expect(page.status).toBe(200);
    expect(page.headers.getSetCookie().join("\n")).toMatch(/__Host-stageline\.csrf=[^;]+; Path=\/; HttpOnly; Secure; SameSite=Lax/);
  });
});

describe("accepting an invitation in a browser that is signed in", () => {
  it("ends the browser's previous session, as sign-in does (issue 19 item 4)", async () => {
    const before = await signInOverHttp(t.url, owner.email, owner.password);
    const { token } = await inviteUser(t.server.ctx.prisma, t.companyId, { email: "joiner@acme.example", role: "member" }, { actor: { type: "user", id: owner.id, email: owner.email } });
    const accepted = await acceptInviteOverHttp(t.url, token, "violet harbor lantern quiz", before.cookie!);
    expect(accepted.status).toBe(303);
    const after = accepted.sessionCookie!;
    expect(after).not.toBe(before.cookie);
    // The owner's session is gone from the database, so its cookie no longer opens the console.
    const ownerId = before.cookie!.slice("stageline.session=".length);
    expect(await t.server.ctx.prisma.consoleSession.count({ where: { idHash: hashSessionId(decodeURIComponent(ownerId)) } })).toBe(0);
    const old = await fetch(`${t.url}/console/keys`, { headers: { cookie: before.cookie! }, redirect: "manual" });
    expect(old.status).toBe(303);
    expect(old.headers.get("location")).toMatch(/\/console\/sign-in/);
    const now = await fetch(`${t.url}/console/keys`, { headers: { cookie: after }, redirect: "manual" });
    expect(now.status).toBe(200);
  });
});

describe("sign-in page", () => {
  it.each([
    ["/console/audit", "/console/audit"],
    ["https://evil.example/", "/console/"],
    ["//evil.example/console/", "/console/"],
    ["/console/\\evil", "/console/"],
  ])("goes on to %p only when it is a console path (next=%p)", async (next, kept) => {
    const page = await fetch(`${t.url}/console/sign-in?next=${encodeURIComponent(next)}`);
    expect(/name="next" value="([^"]*)"/.exec(await page.text())?.[1]).toBe(kept);
  });
});

describe("sign-in rate limits", () => {
  // The limits count in 15-minute windows aligned to the clock: a phase that straddles a boundary reruns once with
  // fresh accounts and addresses (helpers/fixed-window.ts).
  it(`refuses an account after ${SIGN_IN_LIMITS.perAccount} failures (even with the right password), counting failures only`, async () => {
    await withinOneWindow(SIGN_IN_LIMITS.windowMs, async (attempt) => {
      const user = await createConsoleUser(t, "member");
      const from = (i: number) => ({ "x-forwarded-for": `198.51.${100 + attempt}.${i}` });
      for (let i = 0; i < 3; i++) expect((await signInOverHttp(t.url, user.email, user.password, from(200))).status).toBe(303);
      for (let i = 0; i < SIGN_IN_LIMITS.perAccount; i++) {
        expect((await signInOverHttp(t.url, user.email.toUpperCase(), "wrong password!", from(i))).status).toBe(401);
      }
      const blocked = await signInOverHttp(t.url, user.email, user.password, from(100));
      return async () => {
        expect(blocked.status).toBe(429);
        expect(blocked.cookie).toBeNull();
        // Another account from the same addresses is not affected.
        expect((await signInOverHttp(t.url, owner.email, owner.password, from(0))).status).toBe(303);
      };
    });
  }, 60_000);

  it(`refuses an IP after ${SIGN_IN_LIMITS.perIp} failures across accounts`, async () => {
    await withinOneWindow(SIGN_IN_LIMITS.windowMs, async (attempt) => {
      const ip = { "x-forwarded-for": `203.0.${113 + attempt}.7` };
      for (let i = 0; i < SIGN_IN_LIMITS.perIp; i++) {
        expect((await signInOverHttp(t.url, `nobody-${attempt}-${i}@example.test`, "wrong password!", ip)).status).toBe(401);
      }
      const refused = await signInOverHttp(t.url, owner.email, owner.password, ip);
      return async () => {
        expect(refused.status).toBe(429);
        expect((await signInOverHttp(t.url, owner.email, owner.password, { "x-forwarded-for": `203.0.${113 + attempt}.8` })).status).toBe(303);
      };
    });
  }, 120_000);
});

describe("audit log", () => {
  it("lists a company's events newest first with keyset pagination, never another company's", async () => {
    const other = await t.newCompany("Audit Other Co");
    const company = await t.server.ctx.prisma.company.create({ data: { name: "Audit Co" } });
    for (let i = 0; i < 7; i++) {
      await recordAudit(t.server.ctx.prisma, { companyId: company.id, actor: { type: "cli" }, action: "api_key.created", target: { type: "api_key", id: `k${i}`, label: `key ${i}` } });
    }
    await recordAudit(t.server.ctx.prisma, { companyId: other.companyId, actor: { type: "cli" }, action: "api_key.created", target: { type: "api_key", id: "x", label: "other" } });
    const labels: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await listAudit(t.server.ctx.prisma, company.id, { cursor, limit: 3 });
      expect(page.events.length).toBeLessThanOrEqual(3);
      labels.push(...page.events.map((e) => e.target!));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(labels).toEqual(["key 6", "key 5", "key 4", "key 3", "key 2", "key 1", "key 0"]);
  });
});
