/** Data access for console sessions (table `console_sessions`); rows are keyed by the SHA-256 of the cookie's id. */
import { Prisma, type PrismaClient } from "../generated/prisma/client";
import type { Queryable } from "./companies";
import { query } from "./sql";

/** Stores a new session for `userId`. */
export function insertSession(db: Queryable, data: { idHash: string; userId: string; now: Date; expiresAt: Date; secondFactorPending?: boolean }) {
  return db.consoleSession.create({
    data: {
      idHash: data.idHash,
      userId: data.userId,
      createdAt: data.now,
      lastSeenAt: data.now,
      expiresAt: data.expiresAt,
      secondFactorPending: data.secondFactorPending ?? false,
    },
  });
}

/** A session row with its user and the user's company, as every console request reads it. */
export interface SessionWithUser {
  idHash: string;
  lastSeenAt: Date;
  expiresAt: Date;
  flash: unknown;
  secondFactorPending: boolean;
  user: { id: string; email: string; role: string; twoFactorEnabled: boolean; company: { id: string; name: string; requireTwoFactor: boolean } };
}

/**
 * The session `idHash` with its user and the user's company, in ONE statement (a join over the primary keys, a named
 * prepared statement through db/sql.ts): every console request runs it, so it is one round trip, not three.
 * @returns null when unknown.
 */
export async function findSession(prisma: PrismaClient, idHash: string): Promise<SessionWithUser | null> {
  const rows = await query<{
    id_hash: string;
    last_seen_at: Date;
    expires_at: Date;
    flash: unknown;
    second_factor_pending: boolean;
    two_factor_enabled: boolean;
    require_two_factor: boolean;
    user_id: string;
    email: string;
    role: string;
    company_id: string;
    company_name: string;
  }>(
    prisma,
    `SELECT s.id_hash, s.last_seen_at, s.expires_at, s.flash, s.second_factor_pending, u.totp_enabled_at IS NOT NULL AS two_factor_enabled,
            c.require_two_factor, u.id AS user_id, u.email, u.role, c.id AS company_id, c.name AS company_name
     FROM console_sessions s JOIN users u ON u.id = s.user_id JOIN companies c ON c.id = u.company_id
     WHERE s.id_hash = $1`,
    [idHash],
    { name: "find-console-session" },
  );
  const row = rows[0];
  if (!row) return null;
  return {
    idHash: row.id_hash,
    lastSeenAt: row.last_seen_at,
    expiresAt: row.expires_at,
    flash: row.flash,
    secondFactorPending: row.second_factor_pending,
    user: {
      id: row.user_id,
      email: row.email,
      role: row.role,
      twoFactorEnabled: row.two_factor_enabled,
      company: { id: row.company_id, name: row.company_name, requireTwoFactor: row.require_two_factor },
    },
  };
}

/** Records activity: `last_seen_at = now`. */
export function touchSession(db: Queryable, idHash: string, now: Date) {
  return db.consoleSession.updateMany({ where: { idHash }, data: { lastSeenAt: now } });
}

/** Sets (or, with null, clears) the one-time notice of a session. */
export function setFlash(db: Queryable, idHash: string, flash: Prisma.InputJsonValue | null) {
  return db.consoleSession.updateMany({
    where: { idHash },
    data: { flash: flash === null ? Prisma.DbNull : flash },
  });
}

/** Deletes a session (sign-out, expiry); deleting an unknown one is a no-op. */
export function deleteSession(db: Queryable, idHash: string) {
  return db.consoleSession.deleteMany({ where: { idHash } });
}

/** Deletes every session whose idle or absolute limit has passed at `now` (housekeeping). */
export function deleteExpiredSessions(db: Queryable, now: Date, idleMs: number) {
  return db.consoleSession.deleteMany({
    where: { OR: [{ expiresAt: { lte: now } }, { lastSeenAt: { lte: new Date(now.getTime() - idleMs) } }] },
  });
}
