/**
 * The audit log of a company (issue 10 "Pipelines, items, audit"): who did what, to which resource, when and from
 * which IP. Every change made through the console, the admin CLI or the admin API records one event here, in the
 * service that makes the change (so no edge can forget it); the console's Audit log page lists them newest first
 * with keyset pagination (CONTRACT.md "Lists").
 *
 * Usage from a service: `await recordAudit(db, { companyId, actor, action: "api_key.created",
 * target: { type: "api_key", id, label: name }, ip, details: { scopes } })`. Pass the transaction client when the
 * change runs in a transaction, so the event commits (or rolls back) with it.
 */
import type { Prisma } from "../generated/prisma/client";
import * as audit from "../db/audit-log";
import type { Queryable } from "../db/companies";
import { decodeKeysetCursor, encodeKeysetCursor } from "@stageline/shared";

/** Who did it: a signed-in console user, the admin CLI / admin API, an API key, or nobody signed in (failed sign-in). */
export type AuditActor =
  | { type: "user"; id: string; email: string }
  | { type: "cli" }
  | { type: "api_key"; id: string; name: string }
  /** An app connected with OAuth (issue 32): `id` is its grant's id, `name` the app's name. */
  | { type: "oauth_app"; id: string; name: string }
  | { type: "anonymous"; label: string };

/** The actor of the admin CLI and of the admin API (the CLI is its only client). */
export const CLI_ACTOR: AuditActor = { type: "cli" };

/** Every action the audit log records, with the phrase the console shows. */
export const AUDIT_ACTIONS = {
  "api_key.created": "API key created",
  "api_key.renamed": "API key renamed",
  "api_key.revoked": "API key revoked",
  "user.created": "User created",
  "user.invited": "User invited",
  "user.joined": "Invitation accepted",
  "user.removed": "User removed",
  "user.role_changed": "Role changed",
  "user.password_reset": "Password reset",
  "user.name_changed": "Display name changed",
  "sign_in.succeeded": "Sign-in succeeded",
  "sign_in.failed": "Sign-in failed",
  "sign_in.second_factor_failed": "Two-factor code refused",
  "two_factor.enabled": "Two-factor sign-in turned on",
  "two_factor.disabled": "Two-factor sign-in turned off",
  "two_factor.reset": "Two-factor sign-in reset",
  "two_factor.recovery_code_used": "Recovery code used",
  "two_factor.recovery_codes_regenerated": "Recovery codes replaced",
  "company.two_factor_requirement_changed": "Two-factor requirement changed",
  "webhook_endpoint.created": "Webhook endpoint created",
  "webhook_endpoint.changed": "Webhook endpoint changed",
  "webhook_endpoint.deleted": "Webhook endpoint deleted",
  "webhook_endpoint.secret_rotated": "Webhook signing secret rotated",
  "webhook_endpoint.deliveries_replayed": "Webhook deliveries replayed",
  "pipeline.archived": "Pipeline archived",
  "pipeline.restored": "Pipeline restored",
  "item.deleted": "Item deleted",
  "note.created": "Note added",
  "note.updated": "Note edited",
  "note.pinned": "Note pinned",
  "note.unpinned": "Note unpinned",
  "note.deleted": "Note deleted",
  "oauth_grant.revoked": "Connected app revoked",
  "oauth_client.created": "Developer app registered",
  "oauth_client.deleted": "Developer app deleted",
  "oauth_grant.created": "App connected (OAuth)",
} as const;

/** An action name, e.g. `api_key.created`. */
export type AuditAction = keyof typeof AUDIT_ACTIONS;

/** What to record. `target` names the resource acted on; `details` is a small JSON object (never a secret). */
export interface AuditRecord {
  companyId: string;
  actor: AuditActor;
  action: AuditAction;
  target?: { type: string; id: string; label?: string | null };
  /** Client IP as Express reports it (`req.ip`, TRUST_PROXY aware); null for the CLI's direct database path. */
  ip?: string | null;
  details?: Record<string, Prisma.InputJsonValue | null>;
}

/** Records one audit event. Runs on `db`, which may be a transaction client (the event then commits with it). */
export async function recordAudit(db: Queryable, record: AuditRecord): Promise<void> {
  await audit.insertAuditEvent(db, auditRow(record));
}

/**
 * The stored row of `record`, for writes that insert their audit entry in their own statement (db/item-delete.ts).
 */
export function auditRow(record: AuditRecord): audit.AuditEventInsert {
  const { actor } = record;
  return {
    companyId: record.companyId,
    actorType: actor.type,
    actorId: actor.type === "user" || actor.type === "api_key" || actor.type === "oauth_app" ? actor.id : null,
    actorLabel: actorLabel(actor),
    action: record.action,
    targetType: record.target?.type ?? null,
    targetId: record.target?.id ?? null,
    targetLabel: record.target?.label ?? null,
    ip: record.ip ?? null,
    details: (record.details ?? {}) as Prisma.InputJsonValue,
  };
}

/** The "who" column: the user's email, `cli`, `API key "<name>"`, `App "<name>"` (OAuth), or the anonymous label. */
function actorLabel(actor: AuditActor): string {
  switch (actor.type) {
    case "user":
      return actor.email;
    case "cli":
      return "cli";
    case "api_key":
      return `API key "${actor.name}"`;
    case "oauth_app":
      return `App "${actor.name}"`;
    case "anonymous":
      return actor.label;
  }
}

/** One event as the console lists it. */
export interface AuditEntry {
  id: string;
  createdAt: Date;
  actor: string;
  actorType: string;
  action: string;
  /** The human phrase of `action` (AUDIT_ACTIONS), or the action itself when unknown. */
  actionLabel: string;
  target: string | null;
  ip: string | null;
  details: Record<string, unknown>;
}

/** One page of the audit log; `nextCursor` is null on the last page. */
export interface AuditPage {
  events: AuditEntry[];
  nextCursor: string | null;
}

/**
 * One page of company `companyId`'s audit log, newest first (keyset pagination: `cursor` is the opaque value of a
 * previous page's `nextCursor`).
 * @param limit events per page, 1..200.
 * @throws DomainError 400 `validation_failed` for a malformed cursor.
 */
export async function listAudit(db: Queryable, companyId: string, opts: { cursor?: string; limit?: number } = {}): Promise<AuditPage> {
  const limit = Math.min(Math.max(opts.limit ?? 50, 1), 200);
  const after = opts.cursor ? decodeKeysetCursor(opts.cursor) : undefined;
  const rows = await audit.listAuditEvents(db, companyId, after, limit + 1);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    events: page.map((row) => ({
      id: row.id,
      createdAt: row.createdAt,
      actor: row.actorLabel,
      actorType: row.actorType,
      action: row.action,
      actionLabel: (AUDIT_ACTIONS as Record<string, string>)[row.action] ?? row.action,
      target: row.targetLabel ?? row.targetId,
      ip: row.ip,
      details: (row.details ?? {}) as Record<string, unknown>,
    })),
    nextCursor: rows.length > limit && last ? encodeKeysetCursor(last) : null,
  };
}
