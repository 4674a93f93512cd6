/** Data access for console sessions (table `console_sessions`); rows are keyed by the SHA-256 of the cookie's id. */
import { Prisma } from "../generated/prisma/client";
import type { Queryable } from "./companies";

/** Stores a new session for `userId`. */
export function insertSession(db: Queryable, data: { idHash: string; userId: string; now: Date; expiresAt: Date }) {
  return db.consoleSession.create({
    data: { idHash: data.idHash, userId: data.userId, createdAt: data.now, lastSeenAt: data.now, expiresAt: data.expiresAt },
  });
}

/** The session `idHash` with its user and the user's company; null when unknown. */
export function findSession(db: Queryable, idHash: string) {
  return db.consoleSession.findUnique({ where: { idHash }, include: { user: { include: { company: true } } } });
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
