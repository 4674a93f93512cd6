/**
 * Two-factor sign-in for the console (issue 19 item 7): TOTP (RFC 6238; HMAC-SHA1, 6 digits, 30-second steps, what
 * every authenticator app reads from an `otpauth://` URI) through the `otpauth` library, and ten one-time recovery
 * codes.
 *
 * - The secret (160 bits, RFC 4226 section 4) is stored sealed with AES-256-GCM under a server key (table
 *   `server_secrets`, bound to the user's id as associated data), shown only during setup (QR code as an SVG image,
 *   and as base32 text), and never logged. Setup is pending until a valid code confirms it.
 * - A code is checked with a window of one step either side (RFC 6238 section 5.2) and accepted at most once: the
 *   last accepted step is stored and only a later step passes (section 5.2: "the verifier MUST NOT accept the second
 *   attempt of the OTP after the successful validation").
 * - Recovery codes (10 codes of 50 random bits) are shown once and stored as argon2id hashes (services/passwords.ts);
 *   each works once.
 * - An owner (or the admin CLI) can reset a user's two-factor sign-in; users turn off their own with a current code,
 *   unless their company requires two-factor sign-in. Every change records an audit event.
 * Rate limits on codes live in console/failure-limits.ts (HTTP edge), the session states in console-sessions.ts.
 */
import crypto from "node:crypto";
import { Secret, TOTP } from "otpauth";
import type QRCodeModule from "qrcode";
import { inTransaction, type Queryable } from "../db/companies";
import { getOrCreateSecret } from "../db/server-secrets";
import * as store from "../db/two-factor";
import { findUser, findUserInCompany } from "../db/users";
import { recordAudit, type AuditActor } from "./audit-log";
import { domainError, notFound } from "./errors";
import { hashPassword, verifyPassword } from "./passwords";

/** TOTP parameters (RFC 6238 defaults, the ones authenticator apps support). */
export const TOTP_PARAMS = { algorithm: "SHA1", digits: 6, period: 30 } as const;
/** Steps accepted either side of the current one (clock drift). */
export const TOTP_WINDOW = 1;
/** How many recovery codes a user gets. */
export const RECOVERY_CODE_COUNT = 10;
/** The issuer shown by authenticator apps. */
export const TOTP_ISSUER = "Stageline";

const RECOVERY_ALPHABET = "abcdefghijklmnopqrstuvwxyz234567"; // RFC 4648 base32, lower-cased

/** Who changes two-factor settings, and from where. */
export interface TwoFactorActor {
  actor: AuditActor;
  ip?: string | null;
}

function invalidCode(field: string, message = "The code is not correct. Enter the current 6-digit code from your authenticator app.") {
  return domainError("validation_failed", `The request body is invalid (${field}).`, { errors: [{ path: field, message }] });
}

let sealKey: { db: Queryable; value: Promise<Buffer> } | undefined;

/** The AES-256 key of TOTP secrets: 32 random bytes created once per database (`server_secrets`), cached per client. */
function totpKey(db: Queryable): Promise<Buffer> {
  if (sealKey?.db !== db) {
    const value = getOrCreateSecret(db, "totp_encryption_key", crypto.randomBytes(32).toString("base64url")).then((v) => Buffer.from(v, "base64url"));
    sealKey = { db, value };
    value.catch(() => (sealKey = undefined));
  }
  return sealKey.value;
}

async function sealSecret(db: Queryable, userId: string, base32: string): Promise<string> {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv("aes-256-gcm", await totpKey(db), iv);
  cipher.setAAD(Buffer.from(userId));
  const data = Buffer.concat([cipher.update(base32, "utf8"), cipher.final()]);
  return `v1.${Buffer.concat([iv, cipher.getAuthTag(), data]).toString("base64url")}`;
}

async function unsealSecret(db: Queryable, userId: string, sealed: string): Promise<string> {
  const raw = Buffer.from(sealed.replace(/^v1\./, ""), "base64url");
  const decipher = crypto.createDecipheriv("aes-256-gcm", await totpKey(db), raw.subarray(0, 12));
  decipher.setAAD(Buffer.from(userId));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
}

function totpFor(base32: string, email: string): TOTP {
  return new TOTP({ issuer: TOTP_ISSUER, label: email, ...TOTP_PARAMS, secret: Secret.fromBase32(base32) });
}

/** A code as typed: spaces removed; null unless it is 6 digits. */
function normalizeTotpCode(code: unknown): string | null {
  if (typeof code !== "string" || code.length > 32) return null;
  const digits = code.replace(/\s/g, "");
  return /^\d{6}$/.test(digits) ? digits : null;
}

/** A recovery code as typed: lower-cased, spaces and dashes removed; null unless it has the code's shape. */
function normalizeRecoveryCode(code: unknown): string | null {
  if (typeof code !== "string" || code.length > 64) return null;
  const plain = code.toLowerCase().replace(/[\s-]/g, "");
  return /^[a-z2-7]{10}$/.test(plain) ? plain : null;
}

/**
 * The RFC 6238 time step a valid `code` belongs to (within ±TOTP_WINDOW steps of `now`), or null.
 */
function matchingStep(base32: string, email: string, code: string, now: Date): number | null {
  const totp = totpFor(base32, email);
  const delta = totp.validate({ token: code, timestamp: now.getTime(), window: TOTP_WINDOW });
  if (delta === null) return null;
  return TOTP.counter({ period: TOTP_PARAMS.period, timestamp: now.getTime() }) + delta;
}

/** A user's two-factor state as the console's page shows it. */
export interface TwoFactorStatus {
  enabled: boolean;
  enabledAt: Date | null;
  /** Setup started, not confirmed yet. */
  pending: boolean;
  recoveryCodesLeft: number;
  companyRequires: boolean;
}

async function requireTwoFactorUser(db: Queryable, userId: string) {
  const row = await store.findTwoFactorUser(db, userId);
  if (!row) throw notFound("User", userId);
  return row;
}

/**
 * The two-factor state of user `userId`.
 * @throws DomainError 404 `not_found` (user).
 */
export async function twoFactorStatus(db: Queryable, userId: string): Promise<TwoFactorStatus> {
  const row = await requireTwoFactorUser(db, userId);
  return {
    enabled: row.totpEnabledAt !== null,
    enabledAt: row.totpEnabledAt,
    pending: row.totpEnabledAt === null && row.totpSecret !== null,
    recoveryCodesLeft: row.totpEnabledAt ? await store.countUnusedRecoveryCodes(db, userId) : 0,
    companyRequires: row.company.requireTwoFactor,
  };
}

/**
 * Starts (or restarts) setup: a new random secret, stored sealed and pending until `confirmSetup`.
 * @throws DomainError 400 `validation_failed` when two-factor sign-in is already on; 404 (user).
 */
export async function beginSetup(db: Queryable, userId: string): Promise<void> {
  await requireTwoFactorUser(db, userId);
  const secret = new Secret({ size: 20 });
  if (!(await store.setPendingSecret(db, userId, await sealSecret(db, userId, secret.base32)))) {
    throw domainError("validation_failed", "Two-factor sign-in is already on.", { errors: [{ path: "code", message: "Two-factor sign-in is already on." }] });
  }
}

/** What the setup page shows while setup is pending: the base32 secret, the `otpauth://` URI and its QR code (SVG). */
export interface SetupDetails {
  secret: string;
  uri: string;
  qrSvg: string;
}

/**
 * The pending setup's secret, URI and QR code, or null when no setup is pending (the secret of an enabled second
 * factor is never shown again). The QR code is rendered on the server as SVG (no script).
 */
export async function pendingSetup(db: Queryable, userId: string): Promise<SetupDetails | null> {
  const row = await requireTwoFactorUser(db, userId);
  if (row.totpEnabledAt || !row.totpSecret) return null;
  const secret = await unsealSecret(db, userId, row.totpSecret);
  const uri = totpFor(secret, row.email).toString();
  // Loaded on first use (about 8 MB of RSS): only the setup page draws a QR code.
  const QRCode = require("qrcode") as typeof QRCodeModule;
  const qrSvg = await QRCode.toString(uri, { type: "svg", errorCorrectionLevel: "M", margin: 2 });
  return { secret, uri, qrSvg };
}

function newRecoveryCode(): string {
  let code = "";
  for (let i = 0; i < 10; i++) code += RECOVERY_ALPHABET[crypto.randomInt(RECOVERY_ALPHABET.length)];
  return `${code.slice(0, 5)}-${code.slice(5)}`;
}

async function issueRecoveryCodes(db: Queryable, userId: string): Promise<{ codes: string[]; hashes: string[] }> {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  const hashes = await Promise.all(codes.map((c) => hashPassword(c.replace("-", ""))));
  return { codes, hashes };
}

/**
 * Confirms a pending setup with a current code (field `code`): turns two-factor sign-in on, issues the recovery
 * codes, ends the user's other sessions (one opened with a stolen password must not outlive the new factor) and
 * records `two_factor.enabled`.
 * @returns the recovery codes, to be shown once (`xxxxx-xxxxx`).
 * @throws DomainError 400 `validation_failed` on `code` (wrong, reused, or no setup pending); 404 (user).
 */
export async function confirmSetup(
  db: Queryable,
  userId: string,
  code: unknown,
  by: TwoFactorActor & { sessionHash?: string },
  now: Date = new Date(),
): Promise<string[]> {
  const row = await requireTwoFactorUser(db, userId);
  if (row.totpEnabledAt || !row.totpSecret) throw invalidCode("code", "Start the setup first.");
  const digits = normalizeTotpCode(code);
  const step = digits ? matchingStep(await unsealSecret(db, userId, row.totpSecret), row.email, digits, now) : null;
  if (step === null || !(await store.acceptTimeStep(db, userId, step))) throw invalidCode("code");
  const { codes, hashes } = await issueRecoveryCodes(db, userId);
  await inTransaction(db, async (tx) => {
    if (!(await store.markEnabled(tx, userId, now))) throw invalidCode("code", "Start the setup first.");
    await store.replaceRecoveryCodes(tx, userId, hashes);
    // From the console: every session but the one confirming (`sessionHash`) ends.
    if (by.sessionHash !== undefined) await store.endOtherSessions(tx, userId, by.sessionHash);
    await recordAudit(tx, { companyId: row.companyId, actor: by.actor, action: "two_factor.enabled", target: { type: "user", id: row.id, label: row.email }, ip: by.ip });
  });
  return codes;
}

/** How a second factor was proven. */
export type SecondFactorMethod = "totp" | "recovery_code";

/**
 * Checks a second factor of user `userId` (with two-factor sign-in on): a current TOTP `code` (not used before) or
 * an unused `recoveryCode`, which is then used up (`two_factor.recovery_code_used` is recorded with the codes left).
 * @returns the method that passed, or null (wrong, replayed or used code; two-factor sign-in off).
 */
export async function verifySecondFactor(
  db: Queryable,
  userId: string,
  input: { code?: unknown; recoveryCode?: unknown },
  by: TwoFactorActor,
  now: Date = new Date(),
): Promise<SecondFactorMethod | null> {
  const row = await store.findTwoFactorUser(db, userId);
  if (!row?.totpEnabledAt || !row.totpSecret) return null;
  const digits = normalizeTotpCode(input.code);
  if (digits) {
    const step = matchingStep(await unsealSecret(db, userId, row.totpSecret), row.email, digits, now);
    return step !== null && (await store.acceptTimeStep(db, userId, step)) ? "totp" : null;
  }
  const recovery = normalizeRecoveryCode(input.recoveryCode);
  if (!recovery) return null;
  for (const candidate of await store.listUnusedRecoveryCodes(db, userId)) {
    if (!(await verifyPassword(candidate.codeHash, recovery))) continue;
    if (!(await store.markRecoveryCodeUsed(db, candidate.id, now))) return null;
    const left = await store.countUnusedRecoveryCodes(db, userId);
    await recordAudit(db, {
      companyId: row.companyId,
      actor: by.actor,
      action: "two_factor.recovery_code_used",
      target: { type: "user", id: row.id, label: row.email },
      ip: by.ip,
      details: { recovery_codes_left: left },
    });
    return "recovery_code";
  }
  return null;
}

/**
 * Turns off the user's own two-factor sign-in after a current code or a recovery code (fields `code`,
 * `recovery_code`), ends their other sessions and records `two_factor.disabled`.
 * @throws DomainError 400 `validation_failed` on `code` (wrong code, or the company requires two-factor sign-in).
 */
export async function disableOwnTwoFactor(
  db: Queryable,
  userId: string,
  input: { code?: unknown; recoveryCode?: unknown },
  by: TwoFactorActor & { sessionHash: string },
  now: Date = new Date(),
): Promise<void> {
  const row = await requireTwoFactorUser(db, userId);
  if (row.company.requireTwoFactor) throw invalidCode("code", "Your company requires two-factor sign-in, so it cannot be turned off.");
  if (!(await verifySecondFactor(db, userId, input, by, now))) throw invalidCode("code");
  await inTransaction(db, async (tx) => {
    await store.clearTwoFactor(tx, userId, { endSessions: true, keepSessionHash: by.sessionHash });
    await recordAudit(tx, { companyId: row.companyId, actor: by.actor, action: "two_factor.disabled", target: { type: "user", id: row.id, label: row.email }, ip: by.ip });
  });
}

/**
 * Replaces the user's recovery codes after a current code (field `code`) and records
 * `two_factor.recovery_codes_regenerated`. @returns the new codes, shown once.
 * @throws DomainError 400 `validation_failed` on `code`.
 */
export async function regenerateRecoveryCodes(db: Queryable, userId: string, code: unknown, by: TwoFactorActor, now: Date = new Date()): Promise<string[]> {
  const row = await requireTwoFactorUser(db, userId);
  if ((await verifySecondFactor(db, userId, { code }, by, now)) !== "totp") throw invalidCode("code");
  const { codes, hashes } = await issueRecoveryCodes(db, userId);
  await inTransaction(db, async (tx) => {
    await store.replaceRecoveryCodes(tx, userId, hashes);
    await recordAudit(tx, { companyId: row.companyId, actor: by.actor, action: "two_factor.recovery_codes_regenerated", target: { type: "user", id: row.id, label: row.email }, ip: by.ip });
  });
  return codes;
}

/**
 * Resets user `userId`'s two-factor sign-in (an owner in the console, within `companyId`; the admin CLI across
 * companies with `companyId` undefined): forgets the secret and recovery codes, ends the user's sessions and records
 * `two_factor.reset`. The user sets it up again at the next sign-in when the company requires it.
 * @returns the user's id and email. @throws DomainError 404 `not_found` (user, or another company's).
 */
export async function resetTwoFactor(db: Queryable, userId: string, by: TwoFactorActor & { companyId?: string }): Promise<{ id: string; email: string; company_id: string }> {
  const user = by.companyId === undefined ? await findUser(db, userId) : await findUserInCompany(db, by.companyId, userId);
  if (!user) throw notFound("User", userId);
  await inTransaction(db, async (tx) => {
    await store.clearTwoFactor(tx, userId, { endSessions: true });
    await recordAudit(tx, { companyId: user.companyId, actor: by.actor, action: "two_factor.reset", target: { type: "user", id: user.id, label: user.email }, ip: by.ip });
  });
  return { id: user.id, email: user.email, company_id: user.companyId };
}

/**
 * Sets company `companyId`'s "require two-factor sign-in for everyone" (owners) and records
 * `company.two_factor_requirement_changed`. Changing it needs the owner's own two-factor sign-in to be on: turning it
 * on cannot lock the owner out, and an owner signed in with a password alone (say, after a reset) cannot turn it off.
 * @throws DomainError 400 `validation_failed` on `require_two_factor`.
 */
export async function setCompanyTwoFactorRequirement(
  db: Queryable,
  companyId: string,
  required: boolean,
  by: TwoFactorActor & { actor: Extract<AuditActor, { type: "user" }> },
): Promise<void> {
  const owner = await requireTwoFactorUser(db, by.actor.id);
  if (owner.companyId !== companyId) throw notFound("Company", companyId);
  if (!owner.totpEnabledAt) {
    throw domainError("validation_failed", "The request body is invalid (require_two_factor).", {
      errors: [{ path: "require_two_factor", message: "Turn on two-factor sign-in for yourself first." }],
    });
  }
  if (owner.company.requireTwoFactor === required) return;
  await store.setRequireTwoFactor(db, companyId, required);
  await recordAudit(db, {
    companyId,
    actor: by.actor,
    action: "company.two_factor_requirement_changed",
    target: { type: "company", id: companyId },
    ip: by.ip,
    details: { required },
  });
}

/** The ids of company `companyId`'s users with two-factor sign-in on (the Team page's column). */
export function usersWithTwoFactor(db: Queryable, companyId: string): Promise<Set<string>> {
  return store.usersWithTwoFactor(db, companyId);
}
