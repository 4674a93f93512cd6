/**
 * Two-factor sign-in, the services (issue 19 item 7; services/two-factor.ts and console-sessions.ts): the secret is
 * stored sealed and shown only while setup is pending, setup needs a valid code, codes pass within ±1 step and only
 * once (RFC 6238 section 5.2), recovery codes are stored as argon2id hashes and work once, turning it off needs a
 * code, an owner's reset and the company requirement, and the session pending its second factor. Codes are computed
 * with the same library the server uses (otpauth).
 */
import { Secret, TOTP } from "otpauth";
import { createConsoleUser, type ConsoleUser } from "./helpers/console-browser";
import { startTestServer, type TestServer } from "./helpers/test-server";
import { wrongCode } from "./helpers/totp";
import { completeSecondFactor, hashSessionId, resolveSession, SECOND_FACTOR_PENDING_MS, signIn } from "../src/services/console-sessions";
import {
  beginSetup,
  confirmSetup,
  disableOwnTwoFactor,
  pendingSetup,
  RECOVERY_CODE_COUNT,
  regenerateRecoveryCodes,
  resetTwoFactor,
  setCompanyTwoFactorRequirement,
  twoFactorStatus,
  verifySecondFactor,
} from "../src/services/two-factor";
import { DomainError } from "../src/services/errors";
import { createCompany } from "../src/services/companies";
import { CLI_ACTOR } from "../src/services/audit-log";

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
});

afterAll(async () => {
  await t?.close();
});

const db = () => t.server.ctx.prisma;
const T0 = new Date("2026-11-24T12:00:00.000Z").getTime();
const at = (seconds: number) => new Date(T0 + seconds * 1000);

function codeAt(secret: string, when: Date): string {
  return new TOTP({ secret: Secret.fromBase32(secret), algorithm: "SHA1", digits: 6, period: 30 }).generate({ timestamp: when.getTime() });
}

function by(user: ConsoleUser) {
  return { actor: { type: "user" as const, id: user.id, email: user.email }, ip: "192.0.2.1" };
}

/** Turns two-factor sign-in on for `user` at T0. @returns the secret and the recovery codes. */
async function enable(user: ConsoleUser): Promise<{ secret: string; codes: string[] }> {
  await beginSetup(db(), user.id);
  const { secret } = (await pendingSetup(db(), user.id))!;
  const codes = await confirmSetup(db(), user.id, codeAt(secret, at(0)), by(user), at(0));
  return { secret, codes };
}

async function auditActions(userId: string): Promise<string[]> {
  const rows = await db().auditEvent.findMany({ where: { targetId: userId }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  return rows.map((r) => r.action);
}

describe("setup", () => {
  it("stores the secret sealed, shows it (text, otpauth URI, SVG QR code) only while pending, and needs a valid code", async () => {
    const user = await createConsoleUser(t, "admin");
    await beginSetup(db(), user.id);
    const setup = (await pendingSetup(db(), user.id))!;
    expect(setup.secret).toMatch(/^[A-Z2-7]{32}$/); // 160 bits, base32
    expect(setup.uri).toContain(`secret=${setup.secret}`);
    expect(setup.uri).toMatch(/^otpauth:\/\/totp\/Stageline:/);
    expect(setup.qrSvg).toMatch(/^<svg[\s\S]*<\/svg>\s*$/);
    expect(setup.qrSvg).not.toMatch(/<script|on\w+=/i);
    const row = await db().user.findUniqueOrThrow({ where: { id: user.id } });
    expect(row.totpSecret).toMatch(/^v1\./);
    expect(row.totpSecret).not.toContain(setup.secret);
    expect(row.totpEnabledAt).toBeNull();

    // A wrong code does not turn it on.
    const wrong = wrongCode(setup.secret, at(0).getTime());
    await expect(confirmSetup(db(), user.id, wrong, by(user), at(0))).rejects.toMatchObject({ code: "validation_failed" });
    await expect(confirmSetup(db(), user.id, "not a code", by(user), at(0))).rejects.toBeInstanceOf(DomainError);
    expect((await twoFactorStatus(db(), user.id)).enabled).toBe(false);

    const codes = await confirmSetup(db(), user.id, codeAt(setup.secret, at(0)), by(user), at(0));
    expect(codes).toHaveLength(RECOVERY_CODE_COUNT);
    expect(new Set(codes).size).toBe(RECOVERY_CODE_COUNT);
    for (const code of codes) expect(code).toMatch(/^[a-z2-7]{5}-[a-z2-7]{5}$/);
    const stored = await db().twoFactorRecoveryCode.findMany({ where: { userId: user.id } });
    expect(stored).toHaveLength(RECOVERY_CODE_COUNT);
    for (const s of stored) expect(s.codeHash).toMatch(/^\$argon2id\$/);
    expect(stored.map((s) => s.codeHash).join()).not.toContain(codes[0]!.replace("-", ""));

    // Once on, the secret is never shown again and a new setup cannot replace it.
    expect(await pendingSetup(db(), user.id)).toBeNull();
    await expect(beginSetup(db(), user.id)).rejects.toMatchObject({ code: "validation_failed" });
    expect(await twoFactorStatus(db(), user.id)).toMatchObject({ enabled: true, pending: false, recoveryCodesLeft: 10 });
    expect(await auditActions(user.id)).toContain("two_factor.enabled");
  });
});

describe("codes", () => {
  it("accepts a code of the step before or after (±1), not two steps away", async () => {
    const user = await createConsoleUser(t, "member");
    const { secret } = await enable(user);
    const now = at(300);
    expect(await verifySecondFactor(db(), user.id, { code: codeAt(secret, at(240)) }, by(user), now)).toBeNull(); // 2 steps before
    expect(await verifySecondFactor(db(), user.id, { code: codeAt(secret, at(360)) }, by(user), now)).toBeNull(); // 2 steps after
    expect(await verifySecondFactor(db(), user.id, { code: codeAt(secret, at(270)) }, by(user), now)).toBe("totp"); // 1 before
    expect(await verifySecondFactor(db(), user.id, { code: codeAt(secret, at(330)) }, by(user), now)).toBe("totp"); // 1 after
  });

  it("accepts a code once: a replay, or an earlier step's code after a later one, is refused", async () => {
    const user = await createConsoleUser(t, "member");
    const { secret } = await enable(user);
    const code = codeAt(secret, at(600));
    expect(await verifySecondFactor(db(), user.id, { code: ` ${code.slice(0, 3)} ${code.slice(3)} ` }, by(user), at(600))).toBe("totp");
    expect(await verifySecondFactor(db(), user.id, { code }, by(user), at(600))).toBeNull();
    expect(await verifySecondFactor(db(), user.id, { code }, by(user), at(615))).toBeNull();
    expect(await verifySecondFactor(db(), user.id, { code: codeAt(secret, at(570)) }, by(user), at(600))).toBeNull();
    // Two requests racing with the same fresh code: exactly one passes.
    const fresh = codeAt(secret, at(630));
    const results = await Promise.all([1, 2, 3].map(() => verifySecondFactor(db(), user.id, { code: fresh }, by(user), at(630))));
    expect(results.filter((r) => r === "totp")).toHaveLength(1);
  });

  it("accepts each recovery code once (any case, with or without the dash) and records how many are left", async () => {
    const user = await createConsoleUser(t, "member");
    const { codes } = await enable(user);
    expect(await verifySecondFactor(db(), user.id, { recoveryCode: "aaaaa-aaaaa" }, by(user), at(700))).toBeNull();
    expect(await verifySecondFactor(db(), user.id, { recoveryCode: codes[3]!.toUpperCase().replace("-", " ") }, by(user), at(700))).toBe("recovery_code");
    expect(await verifySecondFactor(db(), user.id, { recoveryCode: codes[3] }, by(user), at(701))).toBeNull();
    expect(await verifySecondFactor(db(), user.id, { recoveryCode: "x".repeat(10_000) }, by(user), at(701))).toBeNull();
    expect((await twoFactorStatus(db(), user.id)).recoveryCodesLeft).toBe(9);
    const used = await db().auditEvent.findFirstOrThrow({ where: { targetId: user.id, action: "two_factor.recovery_code_used" } });
    expect(used.details).toEqual({ recovery_codes_left: 9 });
  });

  it("replaces the recovery codes after a current code; the old ones stop working", async () => {
    const user = await createConsoleUser(t, "member");
    const { secret, codes } = await enable(user);
    await expect(regenerateRecoveryCodes(db(), user.id, codes[0], by(user), at(900))).rejects.toMatchObject({ code: "validation_failed" });
    const fresh = await regenerateRecoveryCodes(db(), user.id, codeAt(secret, at(900)), by(user), at(900));
    expect(fresh).toHaveLength(RECOVERY_CODE_COUNT);
    expect(await verifySecondFactor(db(), user.id, { recoveryCode: codes[1] }, by(user), at(901))).toBeNull();
    expect(await verifySecondFactor(db(), user.id, { recoveryCode: fresh[1] }, by(user), at(901))).toBe("recovery_code");
    expect(await auditActions(user.id)).toContain("two_factor.recovery_codes_regenerated");
  });
});

describe("turning on ends the other sessions", () => {
  it("a session opened before (a stolen password, a forgotten browser) does not outlive the new factor", async () => {
    const user = await createConsoleUser(t, "admin");
    const stolen = await signIn(db(), { email: user.email, password: user.password, ip: null });
    expect(stolen!.secondFactorPending).toBe(false);
    const keep = "the-confirming-session";
    await db().consoleSession.create({ data: { idHash: hashSessionId(keep), userId: user.id, expiresAt: at(10_000_000) } });
    await beginSetup(db(), user.id);
    const { secret } = (await pendingSetup(db(), user.id))!;
    await confirmSetup(db(), user.id, codeAt(secret, at(0)), { ...by(user), sessionHash: hashSessionId(keep) }, at(0));
    const left = await db().consoleSession.findMany({ where: { userId: user.id } });
    expect(left.map((s) => s.idHash)).toEqual([hashSessionId(keep)]);
  });
});

describe("turning off, reset and the company requirement", () => {
  it("turns off only with a current code, ending the user's other sessions", async () => {
    const user = await createConsoleUser(t, "admin");
    const { secret } = await enable(user);
    const other = await signIn(db(), { email: user.email, password: user.password, ip: null });
    const keep = "keep-this-session";
    await db().consoleSession.create({ data: { idHash: hashSessionId(keep), userId: user.id, expiresAt: at(10_000_000) } });
    await expect(disableOwnTwoFactor(db(), user.id, { code: "123456" }, { ...by(user), sessionHash: hashSessionId(keep) }, at(1200))).rejects.toMatchObject({
      code: "validation_failed",
    });
    await disableOwnTwoFactor(db(), user.id, { code: codeAt(secret, at(1200)) }, { ...by(user), sessionHash: hashSessionId(keep) }, at(1200));
    expect(await twoFactorStatus(db(), user.id)).toMatchObject({ enabled: false, pending: false });
    expect(await db().twoFactorRecoveryCode.count({ where: { userId: user.id } })).toBe(0);
    const left = await db().consoleSession.findMany({ where: { userId: user.id } });
    expect(left.map((s) => s.idHash)).toEqual([hashSessionId(keep)]);
    expect(other!.secondFactorPending).toBe(true);
    expect(await auditActions(user.id)).toContain("two_factor.disabled");
  });

  it("lets an owner change the requirement only with their own on; then nobody turns theirs off; an owner or the CLI resets", async () => {
    const company = await createCompany(db(), { name: `Requirement ${Date.now()}` });
    const owner = await createConsoleUser(t, "owner", company.id);
    const member = await createConsoleUser(t, "member", company.id);
    const outsider = await createConsoleUser(t, "owner");
    await expect(setCompanyTwoFactorRequirement(db(), company.id, true, by(owner))).rejects.toMatchObject({ code: "validation_failed" });
    const { secret } = await enable(owner);
    await setCompanyTwoFactorRequirement(db(), company.id, true, by(owner));
    expect((await twoFactorStatus(db(), member.id)).companyRequires).toBe(true);
    await expect(disableOwnTwoFactor(db(), owner.id, { code: codeAt(secret, at(1500)) }, { ...by(owner), sessionHash: "x" }, at(1500))).rejects.toMatchObject({
      code: "validation_failed",
    });
    expect((await twoFactorStatus(db(), owner.id)).enabled).toBe(true);

    // An owner without two-factor sign-in cannot turn the requirement off either.
    const owner2 = await createConsoleUser(t, "owner", company.id);
    await expect(setCompanyTwoFactorRequirement(db(), company.id, false, by(owner2))).rejects.toMatchObject({ code: "validation_failed" });
    expect((await twoFactorStatus(db(), owner2.id)).companyRequires).toBe(true);

    await enable(member);
    await signIn(db(), { email: member.email, password: member.password, ip: null });
    // Another company's owner cannot reset this member (404); this company's owner can, and the CLI can.
    await expect(resetTwoFactor(db(), member.id, { ...by(outsider), companyId: outsider.companyId })).rejects.toMatchObject({ code: "not_found" });
    await resetTwoFactor(db(), member.id, { ...by(owner), companyId: company.id });
    expect((await twoFactorStatus(db(), member.id)).enabled).toBe(false);
    expect(await db().consoleSession.count({ where: { userId: member.id } })).toBe(0);
    await enable(member);
    await resetTwoFactor(db(), member.id, { actor: CLI_ACTOR });
    expect((await twoFactorStatus(db(), member.id)).enabled).toBe(false);
    const resets = await db().auditEvent.findMany({ where: { targetId: member.id, action: "two_factor.reset" }, orderBy: { createdAt: "asc" } });
    expect(resets.map((r) => r.actorLabel)).toEqual([owner.email, "cli"]);
    const changed = await db().auditEvent.findFirstOrThrow({ where: { companyId: company.id, action: "company.two_factor_requirement_changed" } });
    expect(changed.details).toEqual({ required: true });
  });
});

describe("sign-in", () => {
  it("gives a user with two-factor sign-in a short session pending the second factor, promoted to a new one by a code", async () => {
    const user = await createConsoleUser(t, "admin");
    const { secret } = await enable(user);
    const now = new Date();
    const pending = (await signIn(db(), { email: user.email, password: user.password, ip: "192.0.2.9" }, now))!;
    expect(pending.secondFactorPending).toBe(true);
    const row = await db().consoleSession.findUniqueOrThrow({ where: { idHash: hashSessionId(pending.sessionId) } });
    expect(row.expiresAt.getTime() - now.getTime()).toBe(SECOND_FACTOR_PENDING_MS);
    expect((await resolveSession(db(), pending.sessionId, now))!.secondFactorPending).toBe(true);
    expect(await auditActions(user.id)).not.toContain("sign_in.succeeded");

    const who = { id: user.id, email: user.email, companyId: user.companyId };
    expect(await completeSecondFactor(db(), hashSessionId(pending.sessionId), who, { code: wrongCode(secret, now.getTime()), ip: null }, now)).toBeNull();
    const full = await completeSecondFactor(db(), hashSessionId(pending.sessionId), who, { code: codeAt(secret, now), ip: "192.0.2.9" }, now);
    expect(full).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(full).not.toBe(pending.sessionId);
    expect(await resolveSession(db(), pending.sessionId, now)).toBeNull();
    expect((await resolveSession(db(), full!, now))!.secondFactorPending).toBe(false);
    const actions = await auditActions(user.id);
    expect(actions).toContain("sign_in.second_factor_failed");
    const succeeded = await db().auditEvent.findFirstOrThrow({ where: { targetId: user.id, action: "sign_in.succeeded" } });
    expect(succeeded.details).toEqual({ second_factor: "totp" });

    // A pending session expires after 10 minutes.
    const again = (await signIn(db(), { email: user.email, password: user.password, ip: null }, now))!;
    expect(await resolveSession(db(), again.sessionId, new Date(now.getTime() + SECOND_FACTOR_PENDING_MS + 1))).toBeNull();
  });
});
