/**
 * Console sign-in and sessions (issue 10 "Users and sign-in"; OWASP Session Management Cheat Sheet). A session id is
 * 32 random bytes (base64url) that live only in the browser's cookie; the database keeps its SHA-256, so a leaked
 * table does not let anyone in. Every sign-in makes a new id (no fixation), a session ends after 12 hours without a
 * request (idle) or 7 days after sign-in (absolute), and sign-out deletes it. Stored in the database, sessions
 * survive a restart and work across several server processes on one PostgreSQL.
 */
import crypto from "node:crypto";
import type { Prisma, PrismaClient } from "../generated/prisma/client";
import type { Queryable } from "../db/companies";
import * as sessions from "../db/console-sessions";
import { getOrCreateSecret } from "../db/server-secrets";
import { findUserByEmail } from "../db/users";
import { recordAudit } from "./audit-log";
import { prepareDummyHash, verifyAgainstDummy, verifyPassword } from "./passwords";
import { verifySecondFactor, type SecondFactorMethod } from "./two-factor";
import { normalizeEmail, type Role } from "./users";

/** Idle expiry: 12 hours without a request, in ms. */
export const SESSION_IDLE_MS = 12 * 60 * 60 * 1000;
/** Absolute expiry: 7 days after sign-in, in ms. */
export const SESSION_ABSOLUTE_MS = 7 * 24 * 60 * 60 * 1000;
/** How long a session waits for the second factor after the password step: 10 minutes, in ms. */
export const SECOND_FACTOR_PENDING_MS = 10 * 60 * 1000;
/** `last_seen_at` is written at most once per this many ms per session (not on every request). */
const TOUCH_INTERVAL_MS = 60_000;

/** The one error of a failed sign-in, the same for an unknown email and a wrong password. */
export const SIGN_IN_FAILED = "The email address or password is not correct.";

/** The signed-in user of a session, with their company: what every console page is scoped to. */
export interface SessionUser {
  id: string;
  email: string;
  role: Role;
  /** Two-factor sign-in is on for this user. */
  twoFactorEnabled: boolean;
  /** `requireTwoFactor`: the company requires two-factor sign-in of everyone. */
  company: { id: string; name: string; requireTwoFactor: boolean };
}

/** A resolved session. */
export interface ConsoleSession {
  /** SHA-256 hex of the cookie's id: the row key, and the CSRF token's session binding. */
  idHash: string;
  user: SessionUser;
  /** The one-time notice left by the previous request (post/redirect/get), already cleared in the database. */
  flash: unknown;
  /**
   * True after the password step of a user with two-factor sign-in, until the second step passes: such a session is
   * NOT signed in (the console puts it on `req.pendingSignIn`, never on `req.consoleSession`).
   */
  secondFactorPending: boolean;
}

/** SHA-256 hex of a session id. */
export function hashSessionId(sessionId: string): string {
  return crypto.createHash("sha256").update(sessionId).digest("hex");
}

/**
 * Checks an email and password; on success starts a new session and records `sign_in.succeeded`, on failure records
 * `sign_in.failed` (when the email belongs to a user, so the event has a company) and returns null. An unknown
 * email costs the same argon2 verification as a wrong password. A successful sign-in also deletes every expired
 * session (housekeeping). For a user with two-factor sign-in the new session is `secondFactorPending` (it expires
 * after SECOND_FACTOR_PENDING_MS) and `sign_in.succeeded` waits for `completeSecondFactor`.
 * @returns the new session id (for the cookie; stored only hashed), the user and whether the second step is due; or null.
 */
export async function signIn(
  db: Queryable,
  input: { email: string; password: string; ip: string | null },
  now: Date = new Date(),
): Promise<{ sessionId: string; user: SessionUser; secondFactorPending: boolean } | null> {
  const email = normalizeEmail(input.email);
  const user = email ? await findUserByEmail(db, email) : null;
  const ok = user ? await verifyPassword(user.passwordHash, input.password) : await verifyAgainstDummy(input.password);
  if (!user || !ok) {
    if (user) {
      await recordAudit(db, {
        companyId: user.companyId,
        actor: { type: "anonymous", label: email },
        action: "sign_in.failed",
        target: { type: "user", id: user.id, label: user.email },
        ip: input.ip,
      });
    }
    return null;
  }
  // Housekeeping: sessions past their limits are refused when used; sign-ins also delete them from the table.
  await deleteExpiredSessions(db, now);
  const secondFactorPending = user.totpEnabledAt !== null;
  const sessionId = await startSession(db, user.id, now, secondFactorPending);
  if (!secondFactorPending) await recordSignIn(db, user, input.ip);
  return {
    sessionId,
    user: {
      id: user.id,
      email: user.email,
      role: user.role as Role,
      twoFactorEnabled: secondFactorPending,
      company: { id: user.company.id, name: user.company.name, requireTwoFactor: user.company.requireTwoFactor },
    },
    secondFactorPending,
  };
}

/** Stores a new session (pending the second factor, or signed in) and returns its id for the cookie. */
async function startSession(db: Queryable, userId: string, now: Date, secondFactorPending: boolean): Promise<string> {
  const sessionId = crypto.randomBytes(32).toString("base64url");
  await sessions.insertSession(db, {
    idHash: hashSessionId(sessionId),
    userId,
    now,
    expiresAt: new Date(now.getTime() + (secondFactorPending ? SECOND_FACTOR_PENDING_MS : SESSION_ABSOLUTE_MS)),
    secondFactorPending,
  });
  return sessionId;
}

function recordSignIn(db: Queryable, user: { id: string; email: string; companyId: string }, ip: string | null, details?: { second_factor: SecondFactorMethod }) {
  return recordAudit(db, {
    companyId: user.companyId,
    actor: { type: "user", id: user.id, email: user.email },
    action: "sign_in.succeeded",
    target: { type: "user", id: user.id, label: user.email },
    ip,
    details,
  });
}

/**
 * The second step of sign-in for the pending session `pendingIdHash` of user `user`: checks a TOTP `code` or a
 * `recoveryCode` (services/two-factor.ts `verifySecondFactor`). On success the pending session is deleted, a NEW
 * session (new id: no fixation) is started and `sign_in.succeeded` is recorded with the method; on failure
 * `sign_in.second_factor_failed` is recorded and null returned.
 * @returns the new session id (for the cookie), or null.
 */
export async function completeSecondFactor(
  db: Queryable,
  pendingIdHash: string,
  user: { id: string; email: string; companyId: string },
  input: { code?: unknown; recoveryCode?: unknown; ip: string | null },
  now: Date = new Date(),
): Promise<string | null> {
  const actor = { type: "user", id: user.id, email: user.email } as const;
  const method = await verifySecondFactor(db, user.id, input, { actor, ip: input.ip }, now);
  if (!method) {
    await recordAudit(db, { companyId: user.companyId, actor, action: "sign_in.second_factor_failed", target: { type: "user", id: user.id, label: user.email }, ip: input.ip });
    return null;
  }
  // Only the pending session that was checked is promoted: deleting it first means it cannot be promoted twice.
  if ((await sessions.deleteSession(db, pendingIdHash)).count !== 1) return null;
  const sessionId = await startSession(db, user.id, now, false);
  await recordSignIn(db, user, input.ip, { second_factor: method });
  return sessionId;
}

/**
 * The session of cookie value `sessionId` at `now`, or null when unknown or expired (an expired row is deleted).
 * Reading the session consumes its flash notice.
 */
export async function resolveSession(db: PrismaClient, sessionId: string, now: Date = new Date()): Promise<ConsoleSession | null> {
  const idHash = hashSessionId(sessionId);
  const row = await sessions.findSession(db, idHash);
  if (!row) return null;
  if (row.expiresAt <= now || row.lastSeenAt.getTime() + SESSION_IDLE_MS <= now.getTime()) {
    await sessions.deleteSession(db, idHash);
    return null;
  }
  if (row.flash !== null) await sessions.setFlash(db, idHash, null);
  if (now.getTime() - row.lastSeenAt.getTime() >= TOUCH_INTERVAL_MS) await sessions.touchSession(db, idHash, now);
  const { user } = row;
  return {
    idHash,
    user: { id: user.id, email: user.email, role: user.role as Role, twoFactorEnabled: user.twoFactorEnabled, company: user.company },
    flash: row.flash,
    secondFactorPending: row.secondFactorPending,
  };
}

/** Leaves a one-time notice for the session's next page (post/redirect/get). `flash` must not hold a secret that outlives one page. */
export async function setFlash(db: Queryable, idHash: string, flash: Prisma.InputJsonValue): Promise<void> {
  await sessions.setFlash(db, idHash, flash);
}

/** Ends a session (sign-out). Unknown ids are ignored. */
export async function signOut(db: Queryable, idHash: string): Promise<void> {
  await sessions.deleteSession(db, idHash);
}

/** Deletes sessions past their idle or absolute expiry at `now` (housekeeping). @returns how many. */
export async function deleteExpiredSessions(db: Queryable, now: Date = new Date()): Promise<number> {
  return (await sessions.deleteExpiredSessions(db, now, SESSION_IDLE_MS)).count;
}

let csrfSecret: { db: Queryable; value: Promise<string> } | undefined;

/**
 * The console's CSRF token key (HMAC secret of csrf-csrf): 32 random bytes created once per database and shared by
 * every server process on it, so a form rendered by one process posts to another. Cached per database client.
 */
export function consoleCsrfSecret(db: Queryable): Promise<string> {
  if (csrfSecret?.db !== db) {
    const value = getOrCreateSecret(db, "console_csrf", crypto.randomBytes(32).toString("base64url"));
    csrfSecret = { db, value };
    value.catch(() => (csrfSecret = undefined));
  }
  return csrfSecret.value;
}

/** Prepares sign-in at start (the unknown-email hash of `verifyAgainstDummy`); never rejects. */
export function prepareSignIn(): void {
  prepareDummyHash().catch(() => undefined);
}
