/**
 * Data access for two-factor sign-in: the TOTP columns of `users` (`totp_secret` sealed by the service,
 * `totp_enabled_at`, `totp_last_step`), the recovery codes (table `two_factor_recovery_codes`, argon2id hashes) and
 * the company setting `companies.require_two_factor`.
 */
import type { Queryable } from "./companies";

/** A user's two-factor columns (and company), or null when unknown. */
export function findTwoFactorUser(db: Queryable, userId: string) {
  return db.user.findUnique({
    where: { id: userId },
    select: { id: true, email: true, companyId: true, totpSecret: true, totpEnabledAt: true, totpLastStep: true, company: { select: { requireTwoFactor: true } } },
  });
}

/** Stores a new, not yet confirmed, sealed TOTP secret; only while two-factor sign-in is off. @returns false when it is on. */
export async function setPendingSecret(db: Queryable, userId: string, sealedSecret: string): Promise<boolean> {
  const { count } = await db.user.updateMany({
    where: { id: userId, totpEnabledAt: null },
    data: { totpSecret: sealedSecret, totpLastStep: null },
  });
  return count === 1;
}

/**
 * Records that time step `step` was used: succeeds only when it is later than the last accepted step (one atomic
 * conditional UPDATE, so two requests with the same code cannot both pass). @returns true when accepted.
 */
export async function acceptTimeStep(db: Queryable, userId: string, step: number): Promise<boolean> {
  const { count } = await db.user.updateMany({
    where: { id: userId, OR: [{ totpLastStep: null }, { totpLastStep: { lt: BigInt(step) } }] },
    data: { totpLastStep: BigInt(step) },
  });
  return count === 1;
}

/** Turns two-factor sign-in on at `now` (the pending secret becomes the secret); false when already on. */
export async function markEnabled(db: Queryable, userId: string, now: Date): Promise<boolean> {
  const { count } = await db.user.updateMany({ where: { id: userId, totpEnabledAt: null, totpSecret: { not: null } }, data: { totpEnabledAt: now } });
  return count === 1;
}

/** Replaces every recovery code of a user with `codeHashes`. */
export async function replaceRecoveryCodes(db: Queryable, userId: string, codeHashes: string[]): Promise<void> {
  await db.twoFactorRecoveryCode.deleteMany({ where: { userId } });
  await db.twoFactorRecoveryCode.createMany({ data: codeHashes.map((codeHash) => ({ userId, codeHash })) });
}

/** The unused recovery codes of a user (id and hash). */
export function listUnusedRecoveryCodes(db: Queryable, userId: string) {
  return db.twoFactorRecoveryCode.findMany({ where: { userId, usedAt: null }, select: { id: true, codeHash: true }, orderBy: { id: "asc" } });
}

/** Marks a recovery code used at `now`; false when it already was (a second use). */
export async function markRecoveryCodeUsed(db: Queryable, id: string, now: Date): Promise<boolean> {
  const { count } = await db.twoFactorRecoveryCode.updateMany({ where: { id, usedAt: null }, data: { usedAt: now } });
  return count === 1;
}

/** How many unused recovery codes a user has left. */
export function countUnusedRecoveryCodes(db: Queryable, userId: string) {
  return db.twoFactorRecoveryCode.count({ where: { userId, usedAt: null } });
}

/**
 * Turns two-factor sign-in off: forgets the secret, the last step and the recovery codes. With `endSessions`, also
 * ends every session of the user except `keepSessionHash` (when given).
 */
export async function clearTwoFactor(db: Queryable, userId: string, opts: { endSessions: boolean; keepSessionHash?: string }): Promise<void> {
  await db.user.update({ where: { id: userId }, data: { totpSecret: null, totpEnabledAt: null, totpLastStep: null } });
  await db.twoFactorRecoveryCode.deleteMany({ where: { userId } });
  if (opts.endSessions) {
    await db.consoleSession.deleteMany({ where: { userId, ...(opts.keepSessionHash ? { idHash: { not: opts.keepSessionHash } } : {}) } });
  }
}

/** Ends every session of `userId` but the one whose id hash is `keepSessionHash` (when two-factor is turned on). */
export async function endOtherSessions(db: Queryable, userId: string, keepSessionHash: string): Promise<void> {
  await db.consoleSession.deleteMany({ where: { userId, idHash: { not: keepSessionHash } } });
}

/** Sets a company's "require two-factor sign-in for everyone". */
export function setRequireTwoFactor(db: Queryable, companyId: string, required: boolean) {
  return db.company.update({ where: { id: companyId }, data: { requireTwoFactor: required }, select: { id: true, requireTwoFactor: true } });
}

/** The ids of a company's users who have two-factor sign-in on. */
export async function usersWithTwoFactor(db: Queryable, companyId: string): Promise<Set<string>> {
  const rows = await db.user.findMany({ where: { companyId, totpEnabledAt: { not: null } }, select: { id: true } });
  return new Set(rows.map((r) => r.id));
}
