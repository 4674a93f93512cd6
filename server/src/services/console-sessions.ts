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
import { normalizeEmail, type Role } from "./users";

/** Idle expiry: 12 hours without a request, in ms. */
export const SESSION_IDLE_MS = 12 * 60 * 60 * 1000;
/** Absolute expiry: 7 days after sign-in, in ms. */
export const SESSION_ABSOLUTE_MS = 7 * 24 * 60 * 60 * 1000;
/** `last_seen_at` is written at most once per this many ms per session (not on every request). */
const TOUCH_INTERVAL_MS = 60_000;

/** The one error of a failed sign-in, the same for an unknown email and a wrong password. */
export const SIGN_IN_FAILED = "The email address or password is not correct.";

/** The signed-in user of a session, with their company: what every console page is scoped to. */
export interface SessionUser {
  id: string;
  email: string;
  role: Role;
  company: { id: string; name: string };
}

/** A resolved session. */
export interface ConsoleSession {
  /** SHA-256 hex of the cookie's id: the row key, and the CSRF token's session binding. */
  idHash: string;
  user: SessionUser;
  /** The one-time notice left by the previous request (post/redirect/get), already cleared in the database. */
  flash: unknown;
}

/** SHA-256 hex of a session id. */
export function hashSessionId(sessionId: string): string {
  return crypto.createHash("sha256").update(sessionId).digest("hex");
}

/**
 * Checks an email and password; on success starts a new session and records `sign_in.succeeded`, on failure records
 * `sign_in.failed` (when the email belongs to a user, so the event has a company) and returns null. An unknown
 * email costs the same argon2 verification as a wrong password. A successful sign-in also deletes every expired
 * session (housekeeping).
 * @returns the new session id (for the cookie; stored only hashed) and the user, or null.
 */
export async function signIn(
  db: Queryable,
  input: { email: string; password: string; ip: string | null },
  now: Date = new Date(),
): Promise<{ sessionId: string; user: SessionUser } | null> {
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
  const sessionId = crypto.randomBytes(32).toString("base64url");
  await sessions.insertSession(db, {
    idHash: hashSessionId(sessionId),
    userId: user.id,
    now,
    expiresAt: new Date(now.getTime() + SESSION_ABSOLUTE_MS),
  });
  await recordAudit(db, {
    companyId: user.companyId,
    actor: { type: "user", id: user.id, email: user.email },
    action: "sign_in.succeeded",
    target: { type: "user", id: user.id, label: user.email },
    ip: input.ip,
  });
  return {
    sessionId,
    user: { id: user.id, email: user.email, role: user.role as Role, company: { id: user.company.id, name: user.company.name } },
  };
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
    user: { id: user.id, email: user.email, role: user.role as Role, company: { id: user.company.id, name: user.company.name } },
    flash: row.flash,
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
