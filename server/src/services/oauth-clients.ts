/**
 * "Developer apps" (issue 32, CONTRACT "Connect with OAuth 2.1" "apps registered in the console"): owners and admins
 * register OAuth clients for their company, stored as oidc-provider `Client` records (docs/oauth-storage.md) that the
 * authorization server reads like any other client. A confidential client's secret is shown once and stored only as
 * `client_secret_sha256`. Deleting a client deletes every grant, token and code issued to it.
 */
import crypto from "node:crypto";
import type { PrismaClient } from "../generated/prisma/client";
import * as clients from "../db/oauth-clients";
import { recordAudit, type AuditActor } from "./audit-log";
import { domainError, notFound } from "./errors";
import { quoteUri, redirectUriRefusal, REDIRECT_URI_MAX_LENGTH, REDIRECT_URIS_MAX } from "./redirect-uri-policy";

/** Limits of the registration form (every input bounded); the redirect URI limits are those of every client. */
export const CLIENT_NAME_MAX = 100;
export { REDIRECT_URIS_MAX, REDIRECT_URI_MAX_LENGTH };

/** `public`: PKCE only, no secret (`token_endpoint_auth_method: none`); `confidential`: `client_secret_basic`. */
export type ClientType = "public" | "confidential";

/** Who registers or deletes, within which company. */
export interface ClientManager {
  actor: AuditActor;
  companyId: string;
  ip?: string | null;
}

/** A registered client as the console lists it. */
export interface DeveloperApp {
  clientId: string;
  name: string;
  type: ClientType;
  redirectUris: string[];
  createdAt: Date;
}

/** What the registration form posts. */
export interface ClientRegistration {
  name?: unknown;
  /** One redirect URI per line. */
  redirect_uris?: unknown;
  type?: unknown;
}

/**
 * Why `uri` is not an acceptable redirect URI, as the form shows it (`"<uri>" <reason>.`), or null: the one redirect
 * URI policy of every client (services/redirect-uri-policy.ts `redirectUriRefusal`).
 */
export function redirectUriProblem(uri: string): string | null {
  const why = redirectUriRefusal(uri);
  return why === null ? null : `"${quoteUri(uri)}" ${why}.`;
}

function invalid(errors: { path: string; message: string }[]): never {
  throw domainError("validation_failed", `The app is invalid (${errors.map((e) => e.path).join(", ")}).`, { errors });
}

/** Parses and bounds the registration form. @throws DomainError 400 `validation_failed` with one entry per field. */
export function parseRegistration(input: ClientRegistration): { name: string; redirectUris: string[]; type: ClientType } {
  const errors: { path: string; message: string }[] = [];
  const name = typeof input.name === "string" ? input.name.trim() : "";
  if (!name) errors.push({ path: "name", message: "Enter the app's name." });
  else if (name.length > CLIENT_NAME_MAX) errors.push({ path: "name", message: `The name is at most ${CLIENT_NAME_MAX} characters long.` });
  else if (/[\u0000-\u001f\u007f]/.test(name)) errors.push({ path: "name", message: "The name cannot contain control characters." });
  const raw = typeof input.redirect_uris === "string" ? input.redirect_uris : "";
  const lines = raw.length > REDIRECT_URIS_MAX * (REDIRECT_URI_MAX_LENGTH + 2) ? null : [...new Set(raw.split(/\r?\n/).map((l) => l.trim()).filter(Boolean))];
  if (lines === null) errors.push({ path: "redirect_uris", message: `Enter at most ${REDIRECT_URIS_MAX} redirect URIs of at most ${REDIRECT_URI_MAX_LENGTH} characters each.` });
  else if (!lines.length) errors.push({ path: "redirect_uris", message: "Enter at least one redirect URI." });
  else if (lines.length > REDIRECT_URIS_MAX) errors.push({ path: "redirect_uris", message: `Enter at most ${REDIRECT_URIS_MAX} redirect URIs.` });
  else {
    const problem = lines.map(redirectUriProblem).find((p) => p !== null);
    if (problem) errors.push({ path: "redirect_uris", message: problem });
  }
  const type = input.type === "public" || input.type === "confidential" ? input.type : null;
  if (!type) errors.push({ path: "type", message: "Choose whether the app is public or confidential." });
  if (errors.length) invalid(errors);
  return { name, redirectUris: lines!, type: type! };
}

/** base64url(sha256(secret)): how a client secret is stored (docs/oauth-storage.md "Client secrets"). */
export function hashClientSecret(secret: string): string {
  return crypto.createHash("sha256").update(secret).digest("base64url");
}

function toApp(row: clients.ClientRow): DeveloperApp {
  const p = row.payload;
  return {
    clientId: row.clientId,
    name: typeof p.client_name === "string" ? p.client_name : row.clientId,
    type: p.token_endpoint_auth_method === "none" ? "public" : "confidential",
    redirectUris: Array.isArray(p.redirect_uris) ? p.redirect_uris.map(String) : [],
    createdAt: row.createdAt,
  };
}

/**
 * Registers a client for `by.companyId`: a random `client_id`, oidc-provider client metadata (`client_name`,
 * `redirect_uris`, `grant_types: ["authorization_code", "refresh_token"]`, `response_types: ["code"]`,
 * `token_endpoint_auth_method` `none` or `client_secret_basic`, `stageline_owner: true`, and for a confidential client
 * `client_secret_sha256`), then records `oauth_client.created` (no secret).
 * @returns the app and, for a confidential client, its secret (shown once; not retrievable afterwards).
 * @throws DomainError 400 `validation_failed` (see `parseRegistration`).
 */
export async function registerClient(prisma: PrismaClient, input: ClientRegistration, by: ClientManager): Promise<{ app: DeveloperApp; clientSecret: string | null }> {
  const { name, redirectUris, type } = parseRegistration(input);
  const clientId = `sl_app_${crypto.randomBytes(16).toString("base64url")}`;
  const clientSecret = type === "confidential" ? crypto.randomBytes(32).toString("base64url") : null;
  const payload: Record<string, unknown> = {
    client_id: clientId,
    client_name: name,
    redirect_uris: redirectUris,
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: type === "public" ? "none" : "client_secret_basic",
    client_id_issued_at: Math.floor(Date.now() / 1000),
    stageline_owner: true,
    ...(clientSecret ? { client_secret_sha256: hashClientSecret(clientSecret) } : {}),
  };
  const app = toApp(await clients.insertClient(prisma, by.companyId, clientId, payload));
  await recordAudit(prisma, {
    companyId: by.companyId,
    actor: by.actor,
    action: "oauth_client.created",
    target: { type: "oauth_client", id: clientId, label: name },
    ip: by.ip ?? null,
    details: { type, redirect_uris: redirectUris },
  });
  return { app, clientSecret };
}

/** The clients the company registered in the console, newest first. */
export async function listDeveloperApps(prisma: PrismaClient, companyId: string): Promise<DeveloperApp[]> {
  return (await clients.listCompanyClients(prisma, companyId)).map(toApp);
}

/** One of the company's registered clients. @throws DomainError 404 `not_found` (unknown or another company's). */
export async function getDeveloperApp(prisma: PrismaClient, companyId: string, clientId: string): Promise<DeveloperApp> {
  const row = await clients.findCompanyClient(prisma, companyId, clientId);
  if (!row) throw notFound("Developer app", clientId);
  return toApp(row);
}

/**
 * Deletes a registered client and, in the same statement, every grant, token and code issued to it; records
 * `oauth_client.deleted`. @returns the deleted app. @throws DomainError 404 `not_found` (unknown or another company's).
 */
export async function deleteDeveloperApp(prisma: PrismaClient, clientId: string, by: ClientManager): Promise<DeveloperApp> {
  const app = await getDeveloperApp(prisma, by.companyId, clientId);
  if ((await clients.deleteCompanyClient(prisma, by.companyId, clientId)) === 0) throw notFound("Developer app", clientId);
  await recordAudit(prisma, {
    companyId: by.companyId,
    actor: by.actor,
    action: "oauth_client.deleted",
    target: { type: "oauth_client", id: clientId, label: app.name },
    ip: by.ip ?? null,
    details: { type: app.type },
  });
  return app;
}
