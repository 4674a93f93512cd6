/**
 * The console's side of an authorization request (CONTRACT "Connect with OAuth 2.1": sign-in, then a consent page
 * naming the app, its redirect host and the requested scopes, any of which the user may untick). Reads the pending
 * interaction from oidc-provider, describes it for the page, and records the user's decision as an oidc-provider
 * Grant (scopes limited by scope-policy.ts), with an audit entry (never a secret).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AppContext } from "../context";
import { recordAudit, type AuditActor } from "../services/audit-log";
import { domainError } from "../services/errors";
import { isMetadataDocumentClientId, recordMetadataDocumentClient } from "./adapter";
import { oauthProvider, REFRESH_TOKEN_TTL, type InteractionDetails, type OAuthClient, type OAuthGrant } from "./provider";
import { OFFLINE_ACCESS, offersRefresh } from "./refresh-policy";
import { grantableScopes, mayGrantScope } from "./scope-policy";
import { originForHost, servedOrigins } from "./served-origins";

/** What the consent page shows. */
export interface ConsentView {
  uid: string;
  /** `client_name`, else the client_id URL's host, else the client_id. */
  appName: string;
  clientId: string;
  /** Host of the redirect URI the answer goes to. */
  redirectHost: string;
  /** Origin of the redirect URI (the page's CSP `form-action` must admit it: the answer redirects there). */
  redirectOrigin: string;
  /** The requested scopes, each with whether this user may grant it. */
  scopes: { name: string; grantable: boolean }[];
  /** The resource the token will be for. */
  resource: string;
}

/** The interaction step: sign-in is done by the console, so `login` is finished at once; `consent` needs the page. */
export type InteractionStep = { step: "login" } | { step: "consent"; view: ConsentView };

type Req = IncomingMessage;
type Res = ServerResponse;

/**
 * The scopes the consent page offers: those requested, plus `offline_access` for a client registered with the
 * `refresh_token` grant that did not ask it (or whose request lost it for want of `prompt=consent`): refresh-policy.ts.
 */
function offeredScopes(details: InteractionDetails, client: OAuthClient): string[] {
  const scopes = new Set((details.params.scope ?? "").split(" ").filter(Boolean));
  if (offersRefresh(client)) scopes.add(OFFLINE_ACCESS);
  return [...scopes];
}

/**
 * Records the person's answer on `offline_access` in `grant`: granted (and no longer rejected, should an earlier
 * consent have unticked it), or rejected (oidc-provider asks again for a requested scope the grant has not met).
 */
function recordRefreshConsent(grant: OAuthGrant, granted: boolean): void {
  if (granted) {
    grant.addOIDCScope(OFFLINE_ACCESS);
    const rejected = grant.rejected?.openid;
    if (rejected?.scope) rejected.scope = rejected.scope.split(" ").filter((s) => s !== OFFLINE_ACCESS).join(" ");
  } else {
    grant.rejectOIDCScope(OFFLINE_ACCESS);
  }
}

/**
 * The provider of the origin the browser addressed (served-origins.ts): the one that started the authorization, whose
 * interaction cookie the browser carries on that host.
 */
function providerFor(ctx: AppContext, req: Req) {
  return oauthProvider(ctx, originForHost(servedOrigins(ctx), req.headers.host));
}

function requestedScopes(details: InteractionDetails): string[] {
  return [...new Set((details.params.scope ?? "").split(" ").filter(Boolean))];
}

/**
 * The pending interaction of this browser (oidc-provider's interaction cookie) for the signed-in `userId`.
 * @throws DomainError not_found when there is none (expired, or another browser's uid).
 */
export async function interactionStep(ctx: AppContext, req: Req, res: Res, uid: string, user: { id: string; role: string }): Promise<InteractionStep> {
  const provider = await providerFor(ctx, req);
  const details = await provider.interactionDetails(req, res).catch(() => undefined);
  if (!details || details.uid !== uid) throw domainError("not_found", "This authorization request has expired. Start again from the app.");
  if (details.prompt.name === "login" || (details.session?.accountId && details.session.accountId !== user.id)) return { step: "login" };
  const client = await provider.Client.find(details.params.client_id ?? "");
  if (!client) throw domainError("not_found", "The app of this request is unknown.");
  const redirect = new URL(details.params.redirect_uri ?? client.redirectUris[0]!);
  let appName = client.clientName ?? "";
  if (!appName) appName = URL.parse(client.clientId)?.host || client.clientId;
  return {
    step: "consent",
    view: {
      uid,
      appName,
      clientId: client.clientId,
      redirectHost: redirect.host,
      redirectOrigin: redirect.origin,
      scopes: offeredScopes(details, client).map((name) => ({ name, grantable: mayGrantScope(user.role, name) })),
      resource: details.params.resource ?? "",
    },
  };
}

/**
 * Finishes the `login` step with the console's signed-in user (oidc-provider redirects back to the authorization).
 * When the browser's provider session belongs to someone else (a console sign-out and another sign-in on the same
 * browser), that session is ended first: the console's user is the one who answers, and oidc-provider's account
 * switch (a logout page of its own, off here) is never needed.
 */
export async function finishLogin(ctx: AppContext, req: Req, res: Res, userId: string): Promise<void> {
  const provider = await providerFor(ctx, req);
  const details = await provider.interactionDetails(req, res);
  const sessionUid = details.session?.uid;
  if (sessionUid && details.session?.accountId && details.session.accountId !== userId) {
    const session = await provider.Session.findByUid(sessionUid);
    await session?.destroy();
    delete details.session;
    await details.save(Math.max(1, (details.exp ?? 0) - Math.floor(Date.now() / 1000)));
  }
  await provider.interactionFinished(req, res, { login: { accountId: userId } }, { mergeWithLastSubmission: false });
}

/** Who decides, for the audit entry. */
export interface Decider {
  id: string;
  email: string;
  role: string;
  companyId: string;
  ip: string | null;
}

/**
 * Records the user's answer to the consent page and redirects the browser on (to the app with a code, or with
 * `access_denied`). Granted scopes: those requested, left ticked, and allowed for the user's role (scope-policy.ts);
 * the rest are rejected in the grant, so the app's token carries only the granted ones. A grant with no API scope
 * left is an `access_denied`.
 * @throws DomainError not_found when the interaction is gone or belongs to another user.
 */
export async function decideConsent(ctx: AppContext, req: Req, res: Res, uid: string, decider: Decider, answer: { approve: boolean; ticked: string[] }): Promise<void> {
  const provider = await providerFor(ctx, req);
  const details = await provider.interactionDetails(req, res).catch(() => undefined);
  if (!details || details.uid !== uid || details.prompt.name !== "consent" || details.session?.accountId !== decider.id) {
    throw domainError("not_found", "This authorization request has expired. Start again from the app.");
  }
  const clientId = details.params.client_id ?? "";
  const client = await provider.Client.find(clientId);
  if (!client) throw domainError("not_found", "The app of this request is unknown.");
  const requested = offeredScopes(details, client);
  const granted = answer.approve ? grantableScopes(decider.role, requested, answer.ticked) : [];
  const apiGranted = granted.filter((s) => s !== "offline_access");
  if (apiGranted.length === 0) {
    await provider.interactionFinished(req, res, { error: "access_denied", error_description: "The user granted no scope." }, { mergeWithLastSubmission: false });
    return;
  }
  const grant = (details.grantId && (await provider.Grant.find(details.grantId))) || new provider.Grant({ accountId: decider.id, clientId });
  const { missingOIDCScope = [], missingResourceScopes = {} } = details.prompt.details;
  const missingOther = missingOIDCScope.filter((s) => s !== OFFLINE_ACCESS);
  const oidcGranted = missingOther.filter((s) => granted.includes(s));
  const oidcRejected = missingOther.filter((s) => !granted.includes(s));
  if (oidcGranted.length) grant.addOIDCScope(oidcGranted.join(" "));
  if (oidcRejected.length) grant.rejectOIDCScope(oidcRejected.join(" "));
  if (requested.includes(OFFLINE_ACCESS)) recordRefreshConsent(grant, granted.includes(OFFLINE_ACCESS));
  for (const [resource, scopes] of Object.entries(missingResourceScopes)) {
    const yes = scopes.filter((s) => granted.includes(s));
    const no = scopes.filter((s) => !granted.includes(s));
    if (yes.length) grant.addResourceScope(resource, yes.join(" "));
    if (no.length) grant.rejectResourceScope(resource, no.join(" "));
  }
  const grantId = await grant.save();
  if (isMetadataDocumentClientId(clientId)) {
    // Name the app for the resource side and the Connected apps page (adapter.ts METADATA_DOCUMENT_MARK).
    if (client.clientName) await recordMetadataDocumentClient(ctx.db.sql, clientId, client.clientName, REFRESH_TOKEN_TTL);
  }
  const actor: AuditActor = { type: "user", id: decider.id, email: decider.email };
  await recordAudit(ctx.prisma, {
    companyId: decider.companyId,
    actor,
    action: "oauth_grant.created",
    target: { type: "oauth_grant", id: grantId, label: clientId.slice(0, 200) },
    ip: decider.ip,
    details: { client_id: clientId.slice(0, 500), scopes: granted, resource: details.params.resource ?? null },
  });
  await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}
