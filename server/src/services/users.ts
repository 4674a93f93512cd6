/**
 * Console users and their roles (issue 10 "Users and sign-in"): `owner` (everything, team included) > `admin` (API
 * keys, webhooks, pipelines) > `member` (read-only). A user belongs to one company; emails are unique across the
 * server, compared case-insensitively (stored lower-cased). A company always keeps at least one owner. The admin
 * CLI, the admin API and the console's Team page all call these functions; each change records an audit event.
 */
import crypto from "node:crypto";
import { z } from "zod";
import { inTransaction, isUniqueViolation, type Queryable } from "../db/companies";
import * as users from "../db/users";
import { deleteUserGrantRecords } from "../db/oauth-grants";
import { NUL_FREE_PATTERN, USER_NAME_MAX, nulFreeMessage, parseInput } from "@stageline/shared";
import { domainError, notFound } from "./errors";
import { recordAudit, type AuditAction, type AuditActor } from "./audit-log";
import { requireCompany } from "./companies";
import { passwordProblem } from "./password-policy";
import { generatePassword, hashPassword } from "./passwords";

/** The roles, most powerful first. */
export const ROLES = ["owner", "admin", "member"] as const;
/** A console role. */
export type Role = (typeof ROLES)[number];

const RANK: Record<Role, number> = { owner: 3, admin: 2, member: 1 };

/** True when `role` is at least `needed` (`owner` > `admin` > `member`). */
export function roleAtLeast(role: string, needed: Role): boolean {
  return (RANK[role as Role] ?? 0) >= RANK[needed];
}

/** How long an invitation link stays valid: 7 days, in ms. */
export const INVITE_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** A user as lists show it (never the password hash). */
export interface UserSummary {
  id: string;
  /** Display name (CONTRACT "People"), null until the user sets one. */
  name: string | null;
  email: string;
  role: Role;
  company_id: string;
  created_at: string;
}

/** Who changes users, within which company (undefined: the admin CLI, across companies), from which IP. */
export interface UserManager {
  actor: AuditActor;
  companyId?: string;
  ip?: string | null;
}

const emailField = z
  .string({ error: "email is required." })
  .trim()
  .toLowerCase()
  .pipe(z.email({ error: "Enter an email address like name@example.com." }).max(254, { error: "The email address is too long." }));
const roleField = z.enum(ROLES, { error: "role must be owner, admin or member." });

/** Body that creates a user: `{ company_id, email, role }` (the password is generated). */
export const UserCreateSchema = z.object({ company_id: z.string().min(1), email: emailField, role: roleField });
/** Body that invites a user: `{ email, role }`. */
export const InviteSchema = z.object({ email: emailField, role: roleField });
/** Body that changes a role: `{ role }`. */
export const RoleChangeSchema = z.object({ role: roleField });
/** Body that accepts an invitation: `{ password, password_confirmation }` (the policy is checked by `acceptInvite`). */
export const AcceptInviteSchema = z.object({
  password: z.string({ error: "Enter a password." }).max(4096, { error: "The password is too long." }),
  password_confirmation: z.string().max(4096, { error: "The password is too long." }).optional(),
});

/**
 * Body that sets one's display name (CONTRACT "People"): `{ name }`, trimmed, at most USER_NAME_MAX (255)
 * characters, no NUL; blank (after trimming) clears it back to null.
 */
export const DisplayNameSchema = z.object({
  name: z
    .string({ error: "name must be text." })
    .trim()
    .max(USER_NAME_MAX, { error: `Your name must be at most ${USER_NAME_MAX} characters.` })
    .regex(NUL_FREE_PATTERN, { error: nulFreeMessage("name") })
    .transform((name) => (name === "" ? null : name)),
});

/** 400 `validation_failed` with one error on `path`. */
function invalidField(path: string, message: string) {
  return domainError("validation_failed", `The request body is invalid (${path}).`, { errors: [{ path, message }] });
}

/** Lower-cases and trims an email as it is stored. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

function toSummary(row: { id: string; name: string | null; email: string; role: string; companyId: string; createdAt: Date }): UserSummary {
  return { id: row.id, name: row.name, email: row.email, role: row.role as Role, company_id: row.companyId, created_at: row.createdAt.toISOString() };
}

function emailTaken(email: string) {
  return invalidField("email", `${email} already has a Stageline account.`);
}

/**
 * Creates a user with a generated password (admin CLI `users create`, and the demo seed) and records `user.created`.
 * @returns the user and its password, which is shown once and never stored in clear.
 * @throws DomainError 400 `validation_failed` (bad email or role, email taken); 404 `not_found` (company).
 */
export async function createUser(db: Queryable, body: unknown, by: UserManager): Promise<UserSummary & { password: string }> {
  const input = parseInput(UserCreateSchema, body);
  if (by.companyId !== undefined && by.companyId !== input.company_id) throw notFound("Company", input.company_id);
  await requireCompany(db, input.company_id);
  const password = generatePassword();
  let row;
  try {
    row = await users.insertUser(db, { companyId: input.company_id, email: input.email, role: input.role, passwordHash: await hashPassword(password) });
  } catch (err) {
    if (isUniqueViolation(err)) throw emailTaken(input.email);
    throw err;
  }
  await auditUser(db, by, "user.created", row, { role: row.role });
  return { ...toSummary(row), password };
}

/**
 * Every user of a company, oldest first.
 * @throws DomainError 404 `not_found` (company).
 */
export async function listUsers(db: Queryable, companyId: string): Promise<UserSummary[]> {
  await requireCompany(db, companyId);
  return (await users.listUsers(db, companyId)).map(toSummary);
}

async function requireUser(db: Queryable, userId: string, companyId: string | undefined) {
  const row = companyId === undefined ? await users.findUser(db, userId) : await users.findUserInCompany(db, companyId, userId);
  if (!row) throw notFound("User", userId);
  return row;
}

/**
 * The user `userId` within `companyId` (when set).
 * @throws DomainError 404 `not_found` when unknown or of another company.
 */
export async function getUser(db: Queryable, userId: string, companyId?: string): Promise<UserSummary> {
  return toSummary(await requireUser(db, userId, companyId));
}

function lastOwner(email: string, what: string) {
  return domainError("validation_failed", `${email} is the company's last owner and cannot be ${what}. Make another user owner first.`, {
    errors: [{ path: "role", message: `${email} is the last owner: make another user owner first.` }],
  });
}

/**
 * Runs `fn` on user `userId` (within `by.companyId` when set) in one transaction that first locks the user's company
 * (db/users.ts `lockCompanyForOwnerChange`), so that the owner count `fn` reads holds until it commits: two owners
 * demoting or removing each other at once cannot leave the company without one (issue 19 item 5).
 * @throws DomainError 404 `not_found` (user, also when it is removed meanwhile); what `fn` throws.
 */
async function withOwnersLocked<T>(db: Queryable, userId: string, by: UserManager, fn: (tx: Queryable, user: Awaited<ReturnType<typeof requireUser>>) => Promise<T>): Promise<T> {
  const found = await requireUser(db, userId, by.companyId);
  return inTransaction(db, async (tx) => {
    await users.lockCompanyForOwnerChange(tx, found.companyId);
    return fn(tx, await requireUser(tx, userId, by.companyId));
  });
}

/** Whether `user` is the only owner of its company (read under `withOwnersLocked`). */
async function isLastOwner(tx: Queryable, user: { role: string; companyId: string }): Promise<boolean> {
  return user.role === "owner" && (await users.countOwners(tx, user.companyId)) <= 1;
}

/**
 * Changes a user's role (body `{ role }`) and records `user.role_changed`, in one transaction with the company locked.
 * A demotion revokes every OAuth grant the user gave (`oauth_grants_revoked` in the audit details).
 * The last owner cannot be demoted, also when another owner is demoted or removed at the same moment.
 * @throws DomainError 400 `validation_failed` (bad role, last owner); 404 `not_found` (user).
 */
export async function changeRole(db: Queryable, userId: string, body: unknown, by: UserManager): Promise<UserSummary> {
  const { role } = parseInput(RoleChangeSchema, body);
  return withOwnersLocked(db, userId, by, async (tx, before) => {
    if (before.role === role) return toSummary(before);
    if (await isLastOwner(tx, before)) throw lastOwner(before.email, "demoted");
    const row = await users.setRole(tx, userId, role);
    // A grant holds the scopes its user could grant at consent (oauth/scope-policy.ts): a demoted user's apps would keep
    // them, so every grant the user gave is revoked with the demotion (the apps ask for consent again).
    const revoked = ROLE_RANK[role] < ROLE_RANK[before.role] ? await deleteUserGrantRecords(tx, before.companyId, userId) : 0;
    await auditUser(tx, by, "user.role_changed", row, { from: before.role, to: row.role, ...(revoked ? { oauth_grants_revoked: String(revoked) } : {}) });
    return toSummary(row);
  });
}

/** Roles by what they may do (a lower rank may grant fewer OAuth scopes: oauth/scope-policy.ts). */
const ROLE_RANK: Record<string, number> = { member: 0, admin: 1, owner: 2 };

/**
 * Removes a user (their sessions and OAuth grants end with them) and records `user.removed`, in one transaction with the company
 * locked. The last owner cannot be removed, also when another owner is demoted or removed at the same moment.
 * @throws DomainError 400 `validation_failed` (last owner); 404 `not_found` (user).
 */
export async function removeUser(db: Queryable, userId: string, by: UserManager): Promise<UserSummary> {
  return withOwnersLocked(db, userId, by, async (tx, row) => {
    if (await isLastOwner(tx, row)) throw lastOwner(row.email, "removed");
    // The user's OAuth grants end with them: their apps' tokens stop at once, in every process.
    const revoked = await deleteUserGrantRecords(tx, row.companyId, userId);
    await users.deleteUser(tx, userId);
    await auditUser(tx, by, "user.removed", row, { role: row.role, ...(revoked ? { oauth_grants_revoked: String(revoked) } : {}) });
    return toSummary(row);
  });
}

/**
 * Gives a user a new generated password (admin CLI `users reset-password`), ends their sessions and records
 * `user.password_reset`.
 * @returns the user and the new password, shown once. @throws DomainError 404 `not_found` (user).
 */
export async function resetPassword(db: Queryable, userId: string, by: UserManager): Promise<UserSummary & { password: string }> {
  const row = await requireUser(db, userId, by.companyId);
  const password = generatePassword();
  await users.setPasswordHash(db, userId, await hashPassword(password));
  await auditUser(db, by, "user.password_reset", row);
  return { ...toSummary(row), password };
}

/** Records `action` on user `row` by `by` in the company's audit log. */
function auditUser(db: Queryable, by: UserManager, action: AuditAction, row: { id: string; email: string; companyId: string }, details?: Record<string, string>) {
  return recordAudit(db, { companyId: row.companyId, actor: by.actor, action, target: { type: "user", id: row.id, label: row.email }, ip: by.ip, details });
}

/** SHA-256 hex of an invitation token (only the hash is stored). */
function hashToken(token: string): string {
  return crypto.createHash("sha256").update(token).digest("hex");
}

/**
 * Invites someone to company `companyId` (body `{ email, role }`) and records `user.invited`.
 * @returns the one-time token for the invitation link (valid INVITE_TTL_MS; shown once, stored hashed) and its expiry.
 * @throws DomainError 400 `validation_failed` (bad email or role, email already has an account).
 */
export async function inviteUser(
  db: Queryable,
  companyId: string,
  body: unknown,
  by: UserManager & { actor: Extract<AuditActor, { type: "user" }> },
  now: Date = new Date(),
): Promise<{ token: string; email: string; role: Role; expiresAt: Date }> {
  const input = parseInput(InviteSchema, body);
  if (await users.findUserByEmail(db, input.email)) throw emailTaken(input.email);
  const token = crypto.randomBytes(32).toString("base64url");
  const invite = await users.insertInvite(db, {
    companyId,
    email: input.email,
    role: input.role,
    tokenHash: hashToken(token),
    invitedBy: by.actor.id,
    createdAt: now,
    expiresAt: new Date(now.getTime() + INVITE_TTL_MS),
  });
  await recordAudit(db, {
    companyId,
    actor: by.actor,
    action: "user.invited",
    target: { type: "invite", id: invite.id, label: invite.email },
    ip: by.ip,
    details: { role: invite.role, expires_at: invite.expiresAt.toISOString() },
  });
  return { token, email: invite.email, role: invite.role as Role, expiresAt: invite.expiresAt };
}

/** Open invitations of a company (not accepted, not expired), newest first. */
export async function listOpenInvites(db: Queryable, companyId: string, now: Date = new Date()) {
  return (await users.listOpenInvites(db, companyId, now)).map((i) => ({ id: i.id, email: i.email, role: i.role, expiresAt: i.expiresAt }));
}

/**
 * The open invitation of `token`.
 * @throws DomainError 404 `not_found` when the token is unknown, used or expired (one message for all three).
 */
export async function findOpenInvite(db: Queryable, token: string, now: Date = new Date()) {
  const invite = await users.findInviteByTokenHash(db, hashToken(token));
  if (!invite || invite.acceptedAt || invite.expiresAt <= now) {
    throw domainError("not_found", "This invitation link is not valid: it was already used, it expired, or it was copied incompletely. Ask for a new one.");
  }
  return { id: invite.id, email: invite.email, role: invite.role as Role, companyId: invite.companyId, companyName: invite.company.name };
}

/**
 * Accepts an invitation: creates the user with the chosen password (body `{ password, password_confirmation }`),
 * marks the link used and records `user.joined`. Runs in one transaction, so a link is used at most once. The password
 * must pass the password policy (password-policy.ts, with the invitee's email and company name as what they are
 * known by), then match its confirmation.
 * @returns the new user. @throws DomainError 400 `validation_failed` (password, with the policy's reason on
 * `password`; confirmation on `password_confirmation`); 404 `not_found` (link).
 */
export async function acceptInvite(db: Queryable, token: string, body: unknown, ip: string | null, now: Date = new Date()): Promise<UserSummary> {
  const input = parseInput(AcceptInviteSchema, body);
  const invite = await findOpenInvite(db, token, now);
  const why = passwordProblem(input.password, { email: invite.email, companyName: invite.companyName });
  if (why) throw invalidField("password", why);
  if (input.password_confirmation !== undefined && input.password_confirmation !== input.password) {
    throw invalidField("password_confirmation", "The passwords do not match.");
  }
  const passwordHash = await hashPassword(input.password);
  const row = await inTransaction(db, async (tx) => {
    if (!(await users.markInviteAccepted(tx, invite.id, now))) await findOpenInvite(tx, token, new Date(0));
    let created;
    try {
      created = await users.insertUser(tx, { companyId: invite.companyId, email: invite.email, role: invite.role, passwordHash });
    } catch (err) {
      if (isUniqueViolation(err)) throw emailTaken(invite.email);
      throw err;
    }
    await recordAudit(tx, {
      companyId: created.companyId,
      actor: { type: "user", id: created.id, email: created.email },
      action: "user.joined",
      target: { type: "user", id: created.id, label: created.email },
      ip,
      details: { role: created.role },
    });
    return created;
  });
  return toSummary(row);
}

/**
 * Sets the display name of user `userId` of company `companyId` (each user sets their own, in the console; CONTRACT
 * "People") from body `{ name }` (DisplayNameSchema: trimmed, 1..255 characters, no NUL; blank clears it), and
 * records `user.name_changed` with the new name (a name is no secret) when it changed.
 * @returns the user after the change.
 * @throws DomainError 400 `validation_failed` (path `name`); 404 `not_found` (user unknown in that company).
 */
export async function setDisplayName(db: Queryable, companyId: string, userId: string, body: unknown, by: UserManager): Promise<UserSummary> {
  const { name } = parseInput(DisplayNameSchema, body);
  const before = await requireUser(db, userId, companyId);
  if (before.name === name) return toSummary(before);
  return inTransaction(db, async (tx) => {
    const row = await users.setUserName(tx, userId, name);
    await auditUser(tx, by, "user.name_changed", row, name === null ? { name: "(none)" } : { name });
    return toSummary(row);
  });
}
