/** Data access for console users (table `users`) and their invitations (table `invites`). */
import type { Prisma, PrismaClient } from "../generated/prisma/client";
import type { Queryable } from "./companies";
import { query } from "./sql";

/** Every user of a company, oldest first. */
export function listUsers(db: Queryable, companyId: string) {
  return db.user.findMany({ where: { companyId }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
}

/** The user `id` of company `companyId`, or null (another company's user is null too). */
export function findUserInCompany(db: Queryable, companyId: string, id: string) {
  return db.user.findFirst({ where: { id, companyId } });
}

/** The user `id` (any company), or null. For the admin CLI, which works across companies. */
export function findUser(db: Queryable, id: string) {
  return db.user.findUnique({ where: { id } });
}

/** The user whose (lower-cased) email is `email`, with its company; null when unknown. */
export function findUserByEmail(db: Queryable, email: string) {
  return db.user.findUnique({ where: { email }, include: { company: true } });
}

/** Stores a new user. `email` must already be lower-cased; a taken email throws Prisma P2002. */
export function insertUser(db: Queryable, data: { companyId: string; email: string; role: string; passwordHash: string }) {
  return db.user.create({ data });
}

/** Sets a user's password hash and ends all of that user's sessions. */
export async function setPasswordHash(db: Queryable, id: string, passwordHash: string) {
  await db.consoleSession.deleteMany({ where: { userId: id } });
  return db.user.update({ where: { id }, data: { passwordHash } });
}

/** Sets a user's role. */
export function setRole(db: Queryable, id: string, role: string) {
  return db.user.update({ where: { id }, data: { role } });
}

/** Deletes a user (their sessions go with them, ON DELETE CASCADE). */
export function deleteUser(db: Queryable, id: string) {
  return db.user.delete({ where: { id } });
}

/**
 * Locks company `companyId`'s row `FOR NO KEY UPDATE` until the end of transaction `tx`, and returns whether the
 * company exists. Every change that can take away an owner (demote, remove) takes this lock first and only then
 * reads the user and counts the owners, so two such changes in one company run one after another and the second
 * counts what the first left (issue 19 item 5). The lock does not conflict with the `FOR KEY SHARE` that writes of
 * items, tasks and keys take on the company row (db/companies.ts `lockedCompanyCte`), so they are not held up.
 */
export async function lockCompanyForOwnerChange(tx: Prisma.TransactionClient, companyId: string): Promise<boolean> {
  const rows = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM companies WHERE id = ${companyId} FOR NO KEY UPDATE`;
  return rows.length === 1;
}

/** How many owners company `companyId` has. */
export function countOwners(db: Queryable, companyId: string) {
  return db.user.count({ where: { companyId, role: "owner" } });
}

/** Stores an invitation; only the SHA-256 hex of its token is kept. */
export function insertInvite(
  db: Queryable,
  data: { companyId: string; email: string; role: string; tokenHash: string; invitedBy: string | null; createdAt: Date; expiresAt: Date },
) {
  return db.invite.create({ data });
}

/** The invitation whose token hashes to `tokenHash`, with its company; null when unknown. */
export function findInviteByTokenHash(db: Queryable, tokenHash: string) {
  return db.invite.findUnique({ where: { tokenHash }, include: { company: true } });
}

/** Open (not accepted, not expired at `now`) invitations of a company, newest first. */
export function listOpenInvites(db: Queryable, companyId: string, now: Date) {
  return db.invite.findMany({
    where: { companyId, acceptedAt: null, expiresAt: { gt: now } },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
  });
}

/** Marks an invitation used; returns false when it was already accepted (a second use of the link). */
export async function markInviteAccepted(db: Queryable, id: string, now: Date): Promise<boolean> {
  const { count } = await db.invite.updateMany({ where: { id, acceptedAt: null }, data: { acceptedAt: now } });
  return count === 1;
}

/** A user as GET /v1/ext/users and a task's `assignee` show it (CONTRACT "People"): no role, no security state. */
export interface UserCard {
  id: string;
  /** The display name, null until the user sets one. */
  name: string | null;
  email: string;
}

/** A place in the people directory's order (name ascending, nulls last, then email ascending). */
export interface DirectoryPosition {
  name: string | null;
  email: string;
}

const CARD_SELECT = { id: true, name: true, email: true } as const;

/** Prisma `where` fragment for "users after `after`" in (name asc nulls last, email asc) order; `{}` for the first page. */
function directoryAfter(after: DirectoryPosition | undefined): Prisma.UserWhereInput {
  if (!after) return {};
  if (after.name === null) return { name: null, email: { gt: after.email } };
  return { OR: [{ name: { gt: after.name } }, { name: after.name, email: { gt: after.email } }, { name: null }] };
}

/**
 * One page of company `companyId`'s users in directory order: by `name` ascending in the database's collation, users
 * without a name last, then by `email` (unique, so the order is total), strictly after `after`. Fetches `take` rows;
 * callers pass `limit + 1` to learn whether a next page exists. Served by the index (company_id, name, email).
 */
export function listUserCards(db: Queryable, companyId: string, after: DirectoryPosition | undefined, take: number): Promise<UserCard[]> {
  return db.user.findMany({
    where: { AND: [{ companyId }, directoryAfter(after)] },
    orderBy: [{ name: { sort: "asc", nulls: "last" } }, { email: "asc" }],
    select: CARD_SELECT,
    take,
  });
}

/**
 * The users of company `companyId` among the ids `ids` (duplicates allowed; ids of another company or of no user are
 * simply absent), in one query; no query at all for an empty list. Used to fill tasks' `assignee` per page and of a
 * task written. Raw SQL (db/sql.ts), so inside an atomic batch (`inEnclosingTransaction`) it joins the batch's
 * transaction: a Prisma query there would wait on PGlite for that very transaction for ever.
 */
export async function findUserCards(prisma: PrismaClient, companyId: string, ids: readonly string[]): Promise<UserCard[]> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return [];
  return query<UserCard>(prisma, `SELECT id, name, email FROM users WHERE company_id = $1 AND id = ANY ($2::text[])`, [companyId, unique], {
    name: "user-cards",
  });
}

/** Sets (or, with null, clears) user `id`'s display name; returns the user. */
export function setUserName(db: Queryable, id: string, name: string | null) {
  return db.user.update({ where: { id }, data: { name } });
}
