/**
 * People (CONTRACT "People" + "Lists"): the company's console users as integrations see them, `{ user_id, name,
 * email }` with no role and no security state. GET /v1/ext/users lists them by display name (ascending in the
 * database's collation, users without a name last), then email, in keyset pages; a task's `assignee` is the user whose
 * id equals its `assigned_to`, looked up once per page (never per row).
 */
import { DomainError, USER_NAME_MAX, type User, type UserListQuery } from "@stageline/shared";
import type { Queryable } from "../db/companies";
import type { PrismaClient } from "../generated/prisma/client";
import * as users from "../db/users";
import type { DirectoryPosition, UserCard } from "../db/users";

/** A stored user card in the contract's User format. */
export function toUser(card: UserCard): User {
  return { user_id: card.id, name: card.name, email: card.email };
}

/** A listed user with its place in the directory order (for the next-page cursor). */
export interface DirectoryEntry extends DirectoryPosition {
  user: User;
}

/** Opaque cursor of the directory: base64url of the JSON `[name or null, email]` of the page's last user. */
export function encodeDirectoryCursor(position: DirectoryPosition): string {
  return Buffer.from(JSON.stringify([position.name, position.email])).toString("base64url");
}

/** Emails are stored trimmed and lower-cased, at most 254 characters (services/users.ts). */
const EMAIL_MAX = 254;

/**
 * Decodes a cursor made by `encodeDirectoryCursor`.
 * @throws DomainError 400 `validation_failed` (path `cursor`) for anything else (CONTRACT "Lists").
 */
export function decodeDirectoryCursor(cursor: string): DirectoryPosition {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (!Array.isArray(value) || value.length !== 2) throw new Error("not a pair");
    const [name, email] = value as unknown[];
    const nameOk = name === null || (typeof name === "string" && name.length >= 1 && name.length <= USER_NAME_MAX && !name.includes("\u0000"));
    const emailOk = typeof email === "string" && email.length >= 1 && email.length <= EMAIL_MAX && !email.includes("\u0000");
    if (!nameOk || !emailOk) throw new Error("not an issued position");
    return { name: name as string | null, email: email as string };
  } catch {
    throw new DomainError("validation_failed", "The cursor is not valid. Use the URL from the Link header as given.", {
      errors: [{ path: "cursor", message: "not a cursor returned by this API" }],
    });
  }
}

/**
 * One page of company `companyId`'s users (GET /v1/ext/users, CONTRACT "People"): name ascending (nulls last), then
 * email; strictly after the query's cursor.
 * @returns up to `query.limit + 1` entries: the extra one tells `pageWithLinkBy` that a next page exists.
 * @throws DomainError 400 `validation_failed` for a cursor this API did not issue.
 */
export async function listPeople(db: Queryable, companyId: string, query: UserListQuery): Promise<DirectoryEntry[]> {
  const after = query.cursor === undefined ? undefined : decodeDirectoryCursor(query.cursor);
  const cards = await users.listUserCards(db, companyId, after, query.limit + 1);
  return cards.map((card) => ({ name: card.name, email: card.email, user: toUser(card) }));
}

/** The `assignee` of a task whose `assigned_to` is the given id: the company's user with that id, or null. */
export type AssigneeOf = (assignedTo: string) => User | null;

/**
 * Looks up, in ONE query, the company's users among `assignedTo` (the `assigned_to` of a page of tasks; any free
 * identifier may be there, only user ids of company `companyId` match) and returns the `assignee` function.
 */
export async function assigneeLookup(prisma: PrismaClient, companyId: string, assignedTo: readonly string[]): Promise<AssigneeOf> {
  const found = new Map((await users.findUserCards(prisma, companyId, assignedTo)).map((card) => [card.id, toUser(card)]));
  return (id) => found.get(id) ?? null;
}
