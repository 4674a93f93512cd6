/**
 * "Connected apps" (issue 32, CONTRACT "Connect with OAuth 2.1"): the OAuth grants of a company (an app a user let
 * act for them), listed with app, scopes, granter and last use, and revoked at once (docs/oauth-storage.md
 * "Revoking a grant": every record of the grant goes, so none of its tokens authenticates afterwards, in any
 * server process). Who sees what: connected-apps-policy.ts.
 */
import type { PrismaClient } from "../generated/prisma/client";
import * as grants from "../db/oauth-grants";
import { recordAudit, type AuditActor } from "./audit-log";
import { grantOwnerFilter } from "./connected-apps-policy";
import { notFound } from "./errors";

/** The signed-in user acting on the page, within their company. */
export interface GrantViewer {
  actor: AuditActor;
  userId: string;
  role: string;
  companyId: string;
  /** Client IP for the audit log. */
  ip?: string | null;
}

/** One connected app as the console shows it. */
export interface ConnectedApp {
  grantId: string;
  /** The app's `client_name`, else its `client_id`. */
  appName: string;
  clientId: string | null;
  /** The granted scopes (API scopes and `offline_access`; `openid` left out), sorted. */
  scopes: string[];
  /** Who granted it: display name, else email, else the user id (a removed user). */
  grantedBy: string;
  grantedByUserId: string | null;
  grantedAt: Date;
  lastUsedAt: Date | null;
}

/**
 * The scopes of an oidc-provider 9 Grant payload (lib/models/grant.js `IN_PAYLOAD`: `openid: { scope, claims }`,
 * `resources: { <resource indicator>: scope }`, `rejected` of the same shape): `openid.scope` (where
 * `offline_access` lives) and every `resources[...]` scope (space-separated strings), less those `rejected` names for
 * the same place, merged, without `openid`.
 */
export function grantScopes(payload: Record<string, unknown>): string[] {
  const words = (value: unknown): string[] => (typeof value === "string" ? value.split(" ").filter(Boolean) : []);
  const record = (value: unknown): Record<string, unknown> => (value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {});
  const rejected = record(payload.rejected);
  const found = new Set<string>();
  const add = (granted: unknown, refused: unknown) => {
    const no = new Set(words(refused));
    for (const s of words(granted)) if (s !== "openid" && !no.has(s)) found.add(s);
  };
  add(record(payload.openid).scope, record(rejected.openid).scope);
  const refusedResources = record(rejected.resources);
  for (const [resource, scope] of Object.entries(record(payload.resources))) add(scope, refusedResources[resource]);
  return [...found].sort();
}

function toApp(row: grants.GrantRow): ConnectedApp {
  return {
    grantId: row.id,
    appName: row.clientName || row.clientId || "Unknown app",
    clientId: row.clientId,
    scopes: grantScopes(row.payload),
    grantedBy: row.accountName || row.accountEmail || row.accountId || "Unknown user",
    grantedByUserId: row.accountId,
    grantedAt: row.createdAt,
    lastUsedAt: row.lastUsedAt,
  };
}

/** The connected apps `viewer` may see (all of the company's for owners and admins, their own for members), newest first. */
export async function listConnectedApps(prisma: PrismaClient, viewer: GrantViewer, now: Date = new Date()): Promise<ConnectedApp[]> {
  return (await grants.listCompanyGrants(prisma, viewer.companyId, now, grantOwnerFilter(viewer))).map(toApp);
}

/**
 * One connected app `viewer` may see.
 * @throws DomainError 404 `not_found` for an unknown or expired grant, another company's, or (for a member) another user's.
 */
export async function getConnectedApp(prisma: PrismaClient, viewer: GrantViewer, grantId: string, now: Date = new Date()): Promise<ConnectedApp> {
  const row = await grants.findCompanyGrant(prisma, viewer.companyId, grantId, now);
  const owner = grantOwnerFilter(viewer);
  if (!row || (owner !== undefined && row.accountId !== owner)) throw notFound("Connected app", grantId);
  return toApp(row);
}

/**
 * Revokes a grant `viewer` may see: deletes the Grant record and every record of it (tokens, codes) in one statement,
 * then records `oauth_grant.revoked` (app, scopes, granter; never a token).
 * @returns the revoked app. @throws DomainError 404 `not_found` as `getConnectedApp`.
 */
export async function revokeConnectedApp(prisma: PrismaClient, viewer: GrantViewer, grantId: string): Promise<ConnectedApp> {
  const app = await getConnectedApp(prisma, viewer, grantId);
  if ((await grants.deleteGrantRecords(prisma, grantId)) === 0) throw notFound("Connected app", grantId);
  await recordAudit(prisma, {
    companyId: viewer.companyId,
    actor: viewer.actor,
    action: "oauth_grant.revoked",
    target: { type: "oauth_grant", id: grantId, label: app.appName },
    ip: viewer.ip ?? null,
    details: { client_id: app.clientId, scopes: app.scopes, granted_by: app.grantedByUserId },
  });
  return app;
}
