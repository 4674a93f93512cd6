/**
 * Test helper for the OAuth resource side (issue 32): writes the authorization server's records the way
 * docs/oauth-storage.md says its adapter does (table `oauth_records`), without the authorization server: a `Client`
 * (optional), a `Grant` and an `AccessToken` whose id is base64url(sha256(token)), whose payload has no `jti`, with
 * `grant_id`, `company_id`, `client_id` and `expires_at` set. So the resource side is tested against the format, not
 * against the provider's code.
 */
import crypto from "node:crypto";
import type { PrismaClient } from "../../src/generated/prisma/client";
import { oauthResources } from "../../src/oauth/resources";

/** What `issueAccessToken` wrote: the raw token (sent as `Authorization: Bearer`), its grant and client. */
export interface IssuedToken {
  token: string;
  grantId: string;
  clientId: string;
  /** The AccessToken record's id (base64url SHA-256 of `token`). */
  recordId: string;
}

export interface TokenOptions {
  companyId: string;
  /** The space-separated OAuth scope (may include `offline_access`). */
  scope: string;
  /** The resource the token is bound to (its `aud`). */
  resource: "rest" | "mcp";
  /** The server's public origin (ctx.publicOrigin()), the base of the resource identifiers. */
  origin: string;
  /** Seconds until the token expires (negative: already expired). Default 3600. */
  expiresIn?: number;
  /** The client's `client_name`; null: no Client record at all (a CIMD/DCR client the reader must name by id). */
  clientName?: string | null;
  /** An existing grant to issue under (another token of the same grant). */
  grantId?: string;
  clientId?: string;
  /** The user who granted it (`payload.accountId`): a user of `companyId`; default `companyUser(companyId)`. */
  accountId?: string;
}

function hashOf(token: string): string {
  return crypto.createHash("sha256").update(token).digest("base64url");
}

async function upsertRecord(
  prisma: PrismaClient,
  data: { model: string; id: string; payload: object; grantId?: string | null; companyId?: string | null; clientId?: string | null; expiresAt?: Date | null },
): Promise<void> {
  await prisma.oAuthRecord.upsert({
    where: { model_id: { model: data.model, id: data.id } },
    create: { ...data, payload: data.payload },
    update: { payload: data.payload, expiresAt: data.expiresAt ?? null },
  });
}

/**
 * A real user of `companyId` to grant test tokens (the resource side accepts a token only while its grant's user is in
 * the token's company: db/oauth-tokens.ts): the company's `oauth-agent-<companyId>@tokens.example` admin, created on
 * first use, with no usable password.
 */
export async function companyUser(prisma: PrismaClient, companyId: string): Promise<string> {
  const email = `oauth-agent-${companyId}@tokens.example`;
  const user = await prisma.user.upsert({
    where: { email },
    create: { companyId, email, role: "admin", passwordHash: "!no-password" },
    update: {},
  });
  return user.id;
}

/**
 * Writes a Client (unless `clientName` is null), a Grant (unless `grantId` names an existing one) and an
 * AccessToken as the authorization server's adapter would.
 */
export async function issueAccessToken(prisma: PrismaClient, opts: TokenOptions): Promise<IssuedToken> {
  const now = Date.now();
  const token = crypto.randomBytes(32).toString("base64url");
  const clientId = opts.clientId ?? `client-${crypto.randomBytes(6).toString("hex")}`;
  const accountId = opts.accountId ?? (await companyUser(prisma, opts.companyId));
  const grantId = opts.grantId ?? crypto.randomBytes(16).toString("base64url");
  const expiresIn = opts.expiresIn ?? 3600;
  const resources = oauthResources(opts.origin);
  const clientName = opts.clientName === undefined ? "Test Agent" : opts.clientName;
  if (clientName !== null) {
    await upsertRecord(prisma, {
      model: "Client",
      id: clientId,
      payload: { client_id: clientId, client_name: clientName, redirect_uris: ["https://agent.example/callback"], token_endpoint_auth_method: "none" },
      clientId,
    });
  }
  if (!opts.grantId) {
    await upsertRecord(prisma, {
      model: "Grant",
      id: grantId,
      payload: { jti: grantId, kind: "Grant", accountId, clientId, iat: Math.floor(now / 1000), exp: Math.floor(now / 1000) + 14 * 86_400, resources: { [resources[opts.resource]]: opts.scope } },
      grantId,
      companyId: opts.companyId,
      clientId,
      expiresAt: new Date(now + 14 * 86_400_000),
    });
  }
  const recordId = hashOf(token);
  await upsertRecord(prisma, {
    model: "AccessToken",
    id: recordId,
    payload: {
      kind: "AccessToken",
      iat: Math.floor(now / 1000),
      exp: Math.floor(now / 1000) + expiresIn,
      accountId,
      clientId,
      grantId,
      aud: resources[opts.resource],
      scope: opts.scope,
      gty: "authorization_code",
      expiresWithSession: false,
    },
    grantId,
    companyId: opts.companyId,
    clientId,
    expiresAt: new Date(now + expiresIn * 1000),
  });
  return { token, grantId, clientId, recordId };
}

/** Revokes a grant as docs/oauth-storage.md says: every record with its `grant_id`, and the Grant record itself. */
export async function revokeGrant(prisma: PrismaClient, grantId: string): Promise<void> {
  await prisma.oAuthRecord.deleteMany({ where: { OR: [{ grantId }, { model: "Grant", id: grantId }] } });
}

/** The `Authorization` header of a token. */
export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}
