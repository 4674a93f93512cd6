/**
 * The OAuth 2.1 authorization server end to end over HTTP (issue 32; CONTRACT "Connect with OAuth 2.1"), with
 * oauth4webapi as the client and a cookie-jar browser through the console's own sign-in and consent forms: discovery
 * (RFC 8414), Dynamic Client Registration, code flow with PKCE S256 and a scope unticked on the consent page,
 * refresh rotation, refresh reuse revoking the grant, a code used twice revoking what it issued, revocation (RFC 7009),
 * and what an attacker tries: PKCE missing, wrong or `plain`, a redirect URI that does not match, another company's
 * user on someone's consent page, a member granting an admin scope. The stored rows never hold a raw token.
 */
import { createHash } from "node:crypto";
import { startTestServer, type TestServer } from "./helpers/test-server";
import { createConsoleUser, signInOverHttp, type ConsoleUser } from "./helpers/console-browser";
import { formOf, loadOauth, TestBrowser, type Oauth } from "./helpers/oauth-flow";
import { Secret, TOTP } from "otpauth";
import { beginSetup, confirmSetup, pendingSetup } from "../src/services/two-factor";
import { purgeExpiredOAuthRecords } from "../src/db/oauth-records";
import { oauthAdapterClass } from "../src/oauth/adapter";

const REDIRECT = "http://127.0.0.1:9/callback";

let t: TestServer;
let oauth: Oauth;
let as: Awaited<ReturnType<Oauth["processDiscoveryResponse"]>>;
let admin: ConsoleUser;
let rest: string;
let mcp: string;
const insecure = () => ({ [oauth.allowInsecureRequests]: true });

beforeAll(async () => {
  t = await startTestServer();
  oauth = await loadOauth();
  const issuer = new URL(t.url);
  as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: "oauth2", ...insecure() }));
  admin = await createConsoleUser(t, "admin");
  rest = `${issuer.origin}/v1/ext`;
  mcp = `${issuer.origin}/v1/ext/mcp`;
}, 60_000);
afterAll(() => t?.close());

type Client = { client_id: string; client_secret?: string };

async function register(meta: Record<string, unknown> = {}): Promise<Client> {
  const res = await oauth.dynamicClientRegistrationRequest(
    as,
    { redirect_uris: [REDIRECT], token_endpoint_auth_method: "none", client_name: "Test Agent", grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], ...meta },
    insecure(),
  );
  return (await oauth.processDynamicClientRegistrationResponse(res)) as unknown as Client;
}

/** A raw Dynamic Client Registration of `uris` (anything) as a public client: the status and the RFC 7591 error. */
async function registerRedirectUris(uris: unknown[]): Promise<{ status: number; error: string; description: string }> {
  const res = await fetch(as.registration_endpoint!, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ redirect_uris: uris, token_endpoint_auth_method: "none" }),
  });
  const body = (await res.json()) as { error: string; error_description: string };
  return { status: res.status, error: body.error, description: body.error_description };
}

async function signedInBrowser(user: { email: string; password: string }): Promise<TestBrowser> {
  const b = new TestBrowser(t.url);
  const s = await signInOverHttp(t.url, user.email, user.password);
  if (!s.cookie) throw new Error("sign-in failed");
  b.jar.add(s.cookie);
  return b;
}

interface AuthRequest {
  scope?: string;
  resource?: string;
  challenge?: string | null;
  method?: string;
  redirect?: string;
  /** `prompt`; null sends none. Default: `consent` when the scope has `offline_access` (as n8n's credential does). */
  prompt?: string | null;
}

function authUrl(client: Client, verifier: string, state: string, opts: AuthRequest = {}): URL {
  const url = new URL(as.authorization_endpoint!);
  url.searchParams.set("client_id", client.client_id);
  url.searchParams.set("redirect_uri", opts.redirect ?? REDIRECT);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("scope", opts.scope ?? "items:read items:write tasks:read offline_access");
  url.searchParams.set("state", state);
  url.searchParams.set("resource", opts.resource ?? rest);
  // What OpenID Connect Core 11 asks for a refresh token; Stageline issues one without it too (refresh-policy.ts).
  const prompt = opts.prompt === undefined && url.searchParams.get("scope")!.split(" ").includes("offline_access") ? "consent" : opts.prompt;
  if (prompt) url.searchParams.set("prompt", prompt);
  const challenge = opts.challenge === undefined ? createHash("sha256").update(verifier).digest("base64url") : opts.challenge;
  if (challenge !== null) {
    url.searchParams.set("code_challenge", challenge);
    url.searchParams.set("code_challenge_method", opts.method ?? "S256");
  }
  return url;
}

/** Runs the browser part up to the consent page. */
async function toConsent(b: TestBrowser, url: URL) {
  const page = await b.get(url.href);
  expect(page.status).toBe(200);
  expect(page.url).toMatch(/\/console\/oauth\/interaction\//);
  return page;
}

/** Walks the flow; unticks `untick` on the consent page. @returns the callback URL the app receives. */
async function authorize(b: TestBrowser, client: Client, verifier: string, state: string, untick: string[] = [], opts: AuthRequest = {}): Promise<URL> {
  const page = await toConsent(b, authUrl(client, verifier, state, opts));
  const { action, csrf } = formOf(page.text);
  const ticked = [...page.text.matchAll(/name="scopes" type="checkbox" value="([^"]+)" checked/g)].map((m) => m[1]!);
  const form = new URLSearchParams({ _csrf: csrf, decision: "allow" });
  for (const s of ticked.filter((s) => !untick.includes(s))) form.append("scopes", s);
  const done = await b.post(action, form);
  expect(done.status).toBe(303);
  return new URL(done.location!);
}

async function exchange(client: Client, callback: URL, verifier: string, state: string) {
  const params = oauth.validateAuthResponse(as, client, callback, state);
  const res = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT, verifier, insecure());
  return oauth.processAuthorizationCodeResponse(as, client, res);
}

async function rows(): Promise<{ model: string; id: string; payload: Record<string, unknown>; company_id: string | null; grant_id: string | null }[]> {
  return t.server.ctx.db.sql.query(`select model, id, payload, company_id, grant_id from oauth_records`);
}

describe("discovery", () => {
  it("serves RFC 8414 metadata at the origin that agrees with the provider and lists nothing the contract forbids", async () => {
    expect(as.issuer).toBe(new URL(t.url).origin);
    expect(as.authorization_endpoint).toBe(`${t.url}/oauth/auth`);
    const own = (await (await fetch(`${t.url}/oauth/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    for (const key of ["issuer", "authorization_endpoint", "token_endpoint", "registration_endpoint", "revocation_endpoint", "jwks_uri", "response_modes_supported", "token_endpoint_auth_methods_supported"]) {
      expect(as[key]).toEqual(own[key]);
    }
    for (const doc of [as as unknown as Record<string, unknown>, own]) {
      expect(doc.response_types_supported).toEqual(["code"]);
      expect(doc.code_challenge_methods_supported).toEqual(["S256"]);
      expect(doc.grant_types_supported).not.toContain("implicit");
      expect(doc.grant_types_supported).not.toContain("password");
      expect(doc.grant_types_supported).not.toContain("urn:ietf:params:oauth:grant-type:device_code");
      expect(doc.authorization_response_iss_parameter_supported).toBe(true);
      expect(doc).not.toHaveProperty("device_authorization_endpoint");
      expect(doc).not.toHaveProperty("introspection_endpoint");
      expect(doc).not.toHaveProperty("end_session_endpoint");
      expect(doc).not.toHaveProperty("pushed_authorization_request_endpoint");
      expect(doc).not.toHaveProperty("dpop_signing_alg_values_supported");
      expect(doc).not.toHaveProperty("userinfo_endpoint");
    }
    expect(as.scopes_supported).toEqual(["items:read", "items:write", "tasks:read", "tasks:write", "hooks:manage", "offline_access"]);
  });
});

describe("authorization code flow", () => {
  it("issues a 1-hour token bound to one resource with only the scopes left ticked, then rotates the refresh token", async () => {
    const client = await register();
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const b = await signedInBrowser(admin);
    const callback = await authorize(b, client, verifier, state, ["items:write"]);
    expect(callback.origin + callback.pathname).toBe(REDIRECT);
    expect(callback.searchParams.get("iss")).toBe(as.issuer);
    const code = callback.searchParams.get("code")!;
    const tokens = await exchange(client, callback, verifier, state);
    expect(tokens.token_type.toLowerCase()).toBe("bearer");
    expect(tokens.expires_in).toBe(3600);
    // The access token's scope is its resource's scopes; `offline_access` shows as the refresh token itself.
    expect(tokens.scope!.split(" ").sort()).toEqual(["items:read", "tasks:read"]);
    expect(tokens.refresh_token).toBeTruthy();

    const stored = await rows();
    const access = stored.find((r) => r.model === "AccessToken")!;
    expect(access.payload.aud).toBe(rest);
    expect(access.payload.accountId).toBe(admin.id);
    expect(access.company_id).toBe(t.companyId);
    expect(String(access.payload.scope).split(" ").sort()).toEqual(["items:read", "tasks:read"]);
    // Stored hashed: no raw token, code or their jti anywhere in the table.
    const dump = JSON.stringify(stored);
    for (const secret of [tokens.access_token, tokens.refresh_token!, code]) {
      expect(dump).not.toContain(secret);
      expect(stored.some((r) => r.id === createHash("sha256").update(secret).digest("base64url"))).toBe(true);
    }

    // The grant is audited, naming the app and the scopes, never a secret.
    const audit = await t.server.ctx.prisma.auditEvent.findMany({ where: { companyId: t.companyId, action: "oauth_grant.created", targetId: access.grant_id! } });
    expect(audit).toHaveLength(1);
    expect(audit[0]!.actorId).toBe(admin.id);
    expect(audit[0]!.details).toEqual({ client_id: client.client_id, scopes: ["items:read", "tasks:read", "offline_access"], resource: rest });
    for (const secret of [tokens.access_token, tokens.refresh_token!, code]) expect(JSON.stringify(audit)).not.toContain(secret);

    // Rotation: a new refresh token every time, the old one refused.
    const r1 = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure()));
    expect(r1.refresh_token).toBeTruthy();
    expect(r1.refresh_token).not.toBe(tokens.refresh_token);
    expect(r1.scope!.split(" ").sort()).toEqual(["items:read", "tasks:read"]);
    const r2 = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), r1.refresh_token!, insecure()));
    expect(r2.access_token).toBeTruthy();
  });

  it("a refresh token used twice revokes the whole grant (every token of it, in the database)", async () => {
    const client = await register();
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const tokens = await exchange(client, await authorize(await signedInBrowser(admin), client, verifier, state), verifier, state);
    const grantId = (await rows()).find((r) => r.model === "AccessToken" && r.id === createHash("sha256").update(tokens.access_token).digest("base64url"))!.grant_id!;
    const first = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure()));
    const reuse = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure());
    expect(reuse.status).toBe(400);
    expect(((await reuse.json()) as { error: string }).error).toBe("invalid_grant");
    expect((await rows()).filter((r) => r.grant_id === grantId || (r.model === "Grant" && r.id === grantId))).toEqual([]);
    // The rotated token (held by whoever reused the old one, or by the app) is dead too.
    const after = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), first.refresh_token!, insecure());
    expect(after.status).toBe(400);
  });

  it("a code used twice is refused and revokes the tokens it issued", async () => {
    const client = await register();
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const callback = await authorize(await signedInBrowser(admin), client, verifier, state);
    const tokens = await exchange(client, callback, verifier, state);
    const hashed = createHash("sha256").update(tokens.access_token).digest("base64url");
    expect((await rows()).some((r) => r.id === hashed)).toBe(true);
    const again = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), oauth.validateAuthResponse(as, client, callback, state), REDIRECT, verifier, insecure());
    expect(again.status).toBe(400);
    expect(((await again.json()) as { error: string }).error).toBe("invalid_grant");
    expect((await rows()).some((r) => r.id === hashed)).toBe(false);
    const refresh = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure());
    expect(refresh.status).toBe(400);
  });

  it("revocation (RFC 7009) of a refresh token ends its grant", async () => {
    const client = await register();
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const tokens = await exchange(client, await authorize(await signedInBrowser(admin), client, verifier, state), verifier, state);
    const res = await oauth.revocationRequest(as, client, oauth.None(), tokens.refresh_token!, insecure());
    await oauth.processRevocationResponse(res);
    const hashed = createHash("sha256").update(tokens.access_token).digest("base64url");
    expect((await rows()).some((r) => r.id === hashed)).toBe(false);
  });

  it("a request without a scope is offered every API scope on the consent page (and offline_access: the client may refresh)", async () => {
    const client = await register();
    const url = authUrl(client, oauth.generateRandomCodeVerifier(), "s");
    url.searchParams.delete("scope");
    url.searchParams.delete("prompt");
    const page = await toConsent(await signedInBrowser(admin), url);
    const offered = [...page.text.matchAll(/name="scopes" type="checkbox" value="([^"]+)"/g)].map((m) => m[1]);
    expect(offered).toEqual(["items:read", "items:write", "tasks:read", "tasks:write", "hooks:manage", "offline_access"]);
  });

  it("an authorization request without `resource` gets a token for the REST API, usable there", async () => {
    const client = await register();
    const verifier = oauth.generateRandomCodeVerifier();
    const b = await signedInBrowser(admin);
    const url = authUrl(client, verifier, "nr", { scope: "items:read" });
    url.searchParams.delete("resource");
    const page = await toConsent(b, url);
    const { action, csrf } = formOf(page.text);
    const done = await b.post(action, new URLSearchParams({ _csrf: csrf, decision: "allow", scopes: "items:read" }));
    const tokens = await exchange(client, new URL(done.location!), verifier, "nr");
    const hashed = createHash("sha256").update(tokens.access_token).digest("base64url");
    expect((await rows()).find((r) => r.id === hashed)!.payload.aud).toBe(rest);
    const me = await fetch(`${t.url}/v1/ext/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(me.status).toBe(200);
    expect(((await me.json()) as { credential: unknown }).credential).toEqual({ type: "oauth", app: { client_id: client.client_id, name: "Test Agent" } });
  });

  it("binds a token to the MCP resource when asked, and refuses an unknown resource", async () => {
    const client = await register();
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const tokens = await exchange(client, await authorize(await signedInBrowser(admin), client, verifier, state, [], { resource: mcp }), verifier, state);
    const hashed = createHash("sha256").update(tokens.access_token).digest("base64url");
    expect((await rows()).find((r) => r.id === hashed)!.payload.aud).toBe(mcp);
    const bad = await new TestBrowser(t.url).get(authUrl(client, verifier, state, { resource: "https://evil.example/api" }).href);
    expect(bad.location ?? "").toMatch(/error=invalid_target/);
  });
});

describe("one use means one use, under concurrency (issue 39; CONTRACT \"Connect with OAuth 2.1\")", () => {
  const AT_ONCE = 6;

  /** Records issued under a grant whose `Grant` record no longer exists (none may outlive its grant). */
  async function orphans(): Promise<unknown[]> {
    return t.server.ctx.db.sql.query(
      `select r.model, r.grant_id from oauth_records r
        where r.grant_id is not null and r.model <> 'Grant'
          and not exists (select 1 from oauth_records g where g.model = 'Grant' and g.id = r.grant_id)`,
    );
  }

  async function meWith(token: string): Promise<number> {
    return (await fetch(`${t.url}/v1/ext/me`, { headers: { authorization: `Bearer ${token}` } })).status;
  }

  async function authorized(): Promise<{ client: Client; callback: URL; verifier: string; state: string }> {
    const client = await register();
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    return { client, verifier, state, callback: await authorize(await signedInBrowser(admin), client, verifier, state) };
  }

  it("the adapter's consume is a compare-and-set: of concurrent uses one goes on, the others revoke the grant; nothing is written under a revoked grant", async () => {
    // At the storage level, where the race lives on either database (PGlite serialises statements, not requests).
    class InvalidGrant extends Error {}
    const Adapter = oauthAdapterClass(t.server.ctx.db.sql, InvalidGrant);
    const grants = new Adapter("Grant");
    const codes = new Adapter("AuthorizationCode");
    const tokens = new Adapter("AccessToken");
    const grantId = `g-${Date.now()}`;
    await grants.upsert(grantId, { kind: "Grant", accountId: admin.id, clientId: "c-one-use" }, 600);
    await codes.upsert("code-one-use", { kind: "AuthorizationCode", grantId, accountId: admin.id, clientId: "c-one-use" }, 60);
    const outcomes = await Promise.allSettled(Array.from({ length: AT_ONCE }, () => codes.consume("code-one-use")));
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
    for (const o of outcomes.filter((o) => o.status === "rejected")) expect((o as PromiseRejectedResult).reason).toBeInstanceOf(InvalidGrant);
    // The losers handled it as reuse: the grant and its code are gone, and the winner can no longer issue under it.
    expect(await grants.find(grantId)).toBeUndefined();
    expect(await codes.find("code-one-use")).toBeUndefined();
    await expect(tokens.upsert("at-one-use", { kind: "AccessToken", grantId, accountId: admin.id, clientId: "c-one-use" }, 3600)).rejects.toBeInstanceOf(InvalidGrant);
    expect(await tokens.find("at-one-use")).toBeUndefined();
    expect(await orphans()).toEqual([]);
  });

  it(`a code presented ${AT_ONCE} times at once is honoured at most once, the rest are reuse: the grant ends, no record outlives it`, async () => {
    for (let trial = 0; trial < 3; trial++) {
      const { client, callback, verifier, state } = await authorized();
      const params = oauth.validateAuthResponse(as, client, callback, state);
      const answers = await Promise.all(
        Array.from({ length: AT_ONCE }, () => oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT, verifier, insecure())),
      );
      const bodies = (await Promise.all(answers.map((r) => r.json()))) as { error?: string; access_token?: string; refresh_token?: string }[];
      const issued = bodies.filter((b) => b.access_token);
      expect(issued.length).toBeLessThanOrEqual(1);
      for (const [i, res] of answers.entries()) if (res.status !== 200) expect([res.status, bodies[i]!.error]).toEqual([400, "invalid_grant"]);
      // Presented more than once: the grant is revoked, and what was issued (if anything) works no more.
      for (const b of issued) {
        expect(await meWith(b.access_token!)).toBe(401);
        expect((await oauth.refreshTokenGrantRequest(as, client, oauth.None(), b.refresh_token!, insecure())).status).toBe(400);
      }
      expect(await orphans()).toEqual([]);
    }
  });

  it(`a refresh token presented ${AT_ONCE} times at once is honoured at most once, the rest are reuse: the grant ends`, async () => {
    for (let trial = 0; trial < 3; trial++) {
      const { client, callback, verifier, state } = await authorized();
      const tokens = await exchange(client, callback, verifier, state);
      const answers = await Promise.all(
        Array.from({ length: AT_ONCE }, () => oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure())),
      );
      const bodies = (await Promise.all(answers.map((r) => r.json()))) as { error?: string; access_token?: string; refresh_token?: string }[];
      const issued = bodies.filter((b) => b.access_token);
      expect(issued.length).toBeLessThanOrEqual(1);
      for (const [i, res] of answers.entries()) if (res.status !== 200) expect([res.status, bodies[i]!.error]).toEqual([400, "invalid_grant"]);
      // No rotated refresh token goes on rotating, and the first access token is dead with its grant.
      for (const b of issued) expect((await oauth.refreshTokenGrantRequest(as, client, oauth.None(), b.refresh_token!, insecure())).status).toBe(400);
      expect(await meWith(tokens.access_token)).toBe(401);
      expect(await orphans()).toEqual([]);
    }
  });

  it("a refresh refused for its resource (invalid_target) spends nothing: the same refresh token then works", async () => {
    const { client, callback, verifier, state } = await authorized();
    const tokens = await exchange(client, callback, verifier, state);
    for (const resource of ["https://evil.example/v1/ext", mcp]) {
      const refused = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, { ...insecure(), additionalParameters: { resource } });
      expect([refused.status, ((await refused.json()) as { error: string }).error]).toEqual([400, "invalid_target"]);
    }
    const refused = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, { ...insecure(), additionalParameters: { scope: "hooks:manage" } });
    expect([refused.status, ((await refused.json()) as { error: string }).error]).toEqual([400, "invalid_scope"]);
    const r1 = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure()));
    expect(await meWith(r1.access_token)).toBe(200);
    const r2 = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), r1.refresh_token!, insecure()));
    expect(await meWith(r2.access_token)).toBe(200);
  });

  it("a code exchange refused for its resource (invalid_target) spends nothing: the same code then works", async () => {
    const { client, callback, verifier, state } = await authorized();
    const params = oauth.validateAuthResponse(as, client, callback, state);
    for (const resource of ["https://evil.example/v1/ext", mcp]) {
      const refused = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT, verifier, { ...insecure(), additionalParameters: { resource } });
      expect([refused.status, ((await refused.json()) as { error: string }).error]).toEqual([400, "invalid_target"]);
    }
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT, verifier, insecure()));
    expect(await meWith(tokens.access_token)).toBe(200);
  });
});

describe("development mode: a client given `localhost` instead of `127.0.0.1` (issue 39 item 6)", () => {
  it("completes discovery, the authorization and a refresh through `localhost`, and its token works at the MCP endpoint through either name", async () => {
    const local = new URL(t.url.replace("//127.0.0.1:", "//localhost:"));
    // What an MCP client checks first (RFC 9728 §3.3): the resource it was given, and the issuer it then asks.
    const prm = (await (await fetch(`${local.origin}/.well-known/oauth-protected-resource/v1/ext/mcp`)).json()) as { resource: string; authorization_servers: string[] };
    expect(prm).toMatchObject({ resource: `${local.origin}/v1/ext/mcp`, authorization_servers: [local.origin] });
    // RFC 8414 §3.3: oauth4webapi refuses metadata whose issuer is not the URL it fetched it from.
    const localAs = await oauth.processDiscoveryResponse(local, await oauth.discoveryRequest(local, { algorithm: "oauth2", ...insecure() }));
    expect(localAs.issuer).toBe(local.origin);
    expect(localAs.token_endpoint).toBe(`${local.origin}/oauth/token`);
    const own = (await (await fetch(`${local.origin}/oauth/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(own.issuer).toBe(local.origin);

    const registered = await oauth.dynamicClientRegistrationRequest(
      localAs,
      { redirect_uris: [REDIRECT], token_endpoint_auth_method: "none", client_name: "Local Agent", grant_types: ["authorization_code", "refresh_token"], response_types: ["code"] },
      insecure(),
    );
    const client = (await oauth.processDynamicClientRegistrationResponse(registered)) as unknown as Client;
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const b = new TestBrowser(local.origin);
    const session = await signInOverHttp(local.origin, admin.email, admin.password);
    b.jar.add(session.cookie!);
    const url = authUrl(client, verifier, state, { resource: prm.resource, scope: "items:read offline_access" });
    const page = await toConsent(b, new URL(url.pathname + url.search, local));
    expect(page.url.startsWith(`${local.origin}/console/oauth/interaction/`)).toBe(true);
    const { action, csrf } = formOf(page.text);
    const form = new URLSearchParams({ _csrf: csrf, decision: "allow" });
    for (const scope of ["items:read", "offline_access"]) form.append("scopes", scope);
    const done = await b.post(action, form);
    expect(done.status).toBe(303);
    const callback = new URL(done.location!);
    expect(callback.searchParams.get("iss")).toBe(local.origin); // RFC 9207
    const params = oauth.validateAuthResponse(localAs, client, callback, state);
    const tokens = await oauth.processAuthorizationCodeResponse(localAs, client, await oauth.authorizationCodeGrantRequest(localAs, client, oauth.None(), params, REDIRECT, verifier, insecure()));
    const hashed = createHash("sha256").update(tokens.access_token).digest("base64url");
    expect((await rows()).find((r) => r.id === hashed)!.payload.aud).toBe(`${local.origin}/v1/ext/mcp`);
    const refreshed = await oauth.processRefreshTokenResponse(localAs, client, await oauth.refreshTokenGrantRequest(localAs, client, oauth.None(), tokens.refresh_token!, insecure()));
    const toolsList = { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} };
    for (const base of [local.origin, t.url]) {
      const res = await fetch(`${base}/v1/ext/mcp`, {
        method: "POST",
        headers: { authorization: `Bearer ${refreshed.access_token}`, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" },
        body: JSON.stringify(toolsList),
      });
      expect(res.status).toBe(200);
    }
    // Still bound to its resource: the REST API refuses it, saying so.
    const atRest = await fetch(`${local.origin}/v1/ext/me`, { headers: { authorization: `Bearer ${refreshed.access_token}` } });
    expect(atRest.status).toBe(401);
    expect(((await atRest.json()) as { token_error: string }).token_error).toBe("wrong_resource");
  });
});

describe("storage", () => {
  it("the purge deletes records past their expiry and keeps the rest", async () => {
    const sql = t.server.ctx.db.sql;
    await sql.query(`insert into oauth_records (model, id, payload, expires_at) values ('Interaction', 'old-1', '{}'::jsonb, now() - interval '1 second'), ('Interaction', 'live-1', '{}'::jsonb, now() + interval '1 hour')`);
    expect(await purgeExpiredOAuthRecords(sql, 500)).toBeGreaterThanOrEqual(1);
    const left = await sql.query<{ id: string }>(`select id from oauth_records where id in ('old-1', 'live-1')`);
    expect(left).toEqual([{ id: "live-1" }]);
  });
});

describe("console-registered clients (docs/oauth-storage.md)", () => {
  it("a confidential client stored with client_secret_sha256 authenticates with its secret, and not with its hash", async () => {
    const secret = "s3cret-" + oauth.generateRandomState();
    const clientId = "console-app-" + oauth.generateRandomState().slice(0, 8);
    const payload = {
      client_id: clientId,
      client_secret_sha256: createHash("sha256").update(secret).digest("base64url"),
      client_name: "Console App",
      redirect_uris: [REDIRECT],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
      stageline_owner: true,
    };
    await t.server.ctx.db.sql.query(`insert into oauth_records (model, id, payload, company_id, client_id) values ('Client', $1, $2::jsonb, $3, $1)`, [clientId, JSON.stringify(payload), t.companyId]);
    const client = { client_id: clientId };
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const callback = await authorize(await signedInBrowser(admin), client, verifier, state);
    const params = oauth.validateAuthResponse(as, client, callback, state);
    const byHash = await oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretBasic(payload.client_secret_sha256), params, REDIRECT, verifier, insecure());
    expect(byHash.status).toBe(401);
    const callback2 = await authorize(await signedInBrowser(admin), client, verifier, state);
    const res = await oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretBasic(secret), oauth.validateAuthResponse(as, client, callback2, state), REDIRECT, verifier, insecure());
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, res);
    expect(tokens.access_token).toBeTruthy();
    const stored = await t.server.ctx.db.sql.query<{ payload: Record<string, unknown>; company_id: string }>(`select payload, company_id from oauth_records where model = 'Client' and id = $1`, [clientId]);
    expect(stored[0]!.company_id).toBe(t.companyId);
    expect(JSON.stringify(stored)).not.toContain(secret);
  });
});

describe("proxies", () => {
  it("the provider believes X-Forwarded-Proto only from a peer TRUST_PROXY trusts", async () => {
    const cookiesOf = async (server: TestServer, clientId: string) => {
      const url = new URL(`${server.url}/oauth/auth`);
      url.search = new URLSearchParams({ client_id: clientId, redirect_uri: REDIRECT, response_type: "code", scope: "items:read", code_challenge: "x".repeat(43), code_challenge_method: "S256" }).toString();
      const res = await fetch(url, { redirect: "manual", headers: { "x-forwarded-proto": "https" } });
      expect(res.status).toBe(303);
      return res.headers.getSetCookie().filter((c) => c.startsWith("_interaction="));
    };
    // The default TRUST_PROXY (loopback) trusts this test's loopback peer: the cookie is marked Secure.
    const trusted = await cookiesOf(t, (await register()).client_id);
    expect(trusted).toHaveLength(1);
    expect(trusted[0]).toMatch(/;\s*secure/i);
    // A server behind a proxy at 10.0.0.1: this loopback peer is not it, so its forwarded headers are dropped.
    const strict = await startTestServer({ trustProxy: "10.0.0.1" });
    try {
      const reg = await fetch(`${strict.url}/oauth/reg`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" }),
      });
      const untrusted = await cookiesOf(strict, ((await reg.json()) as Client).client_id);
      expect(untrusted).toHaveLength(1);
      expect(untrusted[0]).not.toMatch(/;\s*secure/i);
    } finally {
      await strict.close();
    }
  });
});

describe("refresh tokens after consent, asked for or not (CONTRACT; SEP-2207)", () => {
  /** Walks the flow with `opts` (unticking `untick`) and exchanges the code: the token response. */
  async function tokensFor(client: Client, opts: AuthRequest, untick: string[] = []) {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    return exchange(client, await authorize(await signedInBrowser(admin), client, verifier, state, untick, opts), verifier, state);
  }
  const refresh = async (client: Client, token: string) =>
    oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), token, insecure()));

  it.each([
    ["only API scopes, no prompt (the MCP SDK 1.x)", { scope: "items:read tasks:read", prompt: null }],
    ["offline_access without prompt=consent (oidc-provider would drop it)", { scope: "items:read tasks:read offline_access", prompt: null }],
    ["no scope at all", { scope: "", prompt: null }],
  ])("%s: the consent page offers offline_access, and the code yields a refresh token that rotates", async (_name, opts) => {
    const client = await register();
    const url = authUrl(client, "v", "s", opts);
    if (!opts.scope) url.searchParams.delete("scope");
    const page = await toConsent(await signedInBrowser(admin), url);
    expect(page.text).toMatch(/name="scopes" type="checkbox" value="offline_access" checked/);
    const tokens = opts.scope ? await tokensFor(client, opts) : await tokensFor(client, { ...opts, scope: "items:read items:write tasks:read tasks:write hooks:manage" });
    expect(tokens.refresh_token).toBeTruthy();
    expect(tokens.scope!.split(" ")).not.toContain("offline_access");
    // The grant records the consent; the refresh token outlives the provider's browser session.
    const stored = await rows();
    const grantId = stored.find((r) => r.id === createHash("sha256").update(tokens.access_token).digest("base64url"))!.grant_id!;
    expect(String((stored.find((r) => r.model === "Grant" && r.id === grantId)!.payload.openid as { scope: string }).scope).split(" ")).toContain("offline_access");
    const rt = stored.find((r) => r.id === createHash("sha256").update(tokens.refresh_token!).digest("base64url"))!;
    expect(rt.payload.expiresWithSession).toBeUndefined();
    const r1 = await refresh(client, tokens.refresh_token!);
    expect(r1.refresh_token).toBeTruthy();
    expect(r1.refresh_token).not.toBe(tokens.refresh_token);
    expect(r1.scope).toBe(tokens.scope);
    const r2 = await refresh(client, r1.refresh_token!);
    expect(r2.refresh_token).not.toBe(r1.refresh_token);
  });

  it("unticking offline_access on the consent page gives no refresh token, whatever the request asked", async () => {
    for (const opts of [{ scope: "items:read", prompt: null }, { scope: "items:read offline_access" }]) {
      const client = await register();
      const tokens = await tokensFor(client, opts, ["offline_access"]);
      expect(tokens.access_token).toBeTruthy();
      expect(tokens.refresh_token).toBeUndefined();
    }
  });

  it("a later consent that ticks offline_access again, on the same grant, gives a refresh token again", async () => {
    const client = await register();
    expect((await tokensFor(client, { scope: "items:read", prompt: null }, ["offline_access"])).refresh_token).toBeUndefined();
    // prompt=consent shows the page again for the existing grant, which rejected offline_access.
    const tokens = await tokensFor(client, { scope: "items:read", prompt: "consent" });
    expect(tokens.refresh_token).toBeTruthy();
    expect((await tokensFor(client, { scope: "items:read", prompt: "consent" }, ["offline_access"])).refresh_token).toBeUndefined();
  });

  it("a client registered without the refresh_token grant is not offered offline_access and gets no refresh token", async () => {
    const client = await register({ grant_types: ["authorization_code"] });
    const page = await toConsent(await signedInBrowser(admin), authUrl(client, "v", "s", { scope: "items:read offline_access" }));
    expect(page.text).not.toContain('value="offline_access"');
    const tokens = await tokensFor(client, { scope: "items:read offline_access" });
    expect(tokens.refresh_token).toBeUndefined();
  });

  it("Protected Resource Metadata and WWW-Authenticate keep listing only the API scopes", async () => {
    const prm = (await (await fetch(`${t.url}/.well-known/oauth-protected-resource/v1/ext/mcp`)).json()) as { scopes_supported: string[] };
    expect(prm.scopes_supported).toEqual(["items:read", "items:write", "tasks:read", "tasks:write", "hooks:manage"]);
    const res = await fetch(`${t.url}/v1/ext/mcp`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toContain('scope="items:read items:write tasks:read tasks:write hooks:manage"');
    expect(res.headers.get("www-authenticate")).not.toContain("offline_access");
  });
});

describe("sign-in", () => {
  it("asks a user with two-factor sign-in for the code before the consent page, then continues the authorization", async () => {
    const user = await createConsoleUser(t, "admin");
    const db = t.server.ctx.prisma;
    await beginSetup(db, user.id);
    const { secret } = (await pendingSetup(db, user.id))!;
    const totp = new TOTP({ secret: Secret.fromBase32(secret.replace(/\s/g, "")), algorithm: "SHA1", digits: 6, period: 30 });
    const first = totp.generate();
    await confirmSetup(db, user.id, first, { actor: { type: "cli" } });
    const b = await signedInBrowser(user); // only the password step: the session waits for its second factor
    const client = await register();
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const second = await b.get(authUrl(client, verifier, state).href);
    expect(second.url).toMatch(/\/console\/sign-in\/two-factor\?next=%2Fconsole%2Foauth%2Finteraction%2F/);
    const csrf = formOf(second.text).csrf;
    const next = /name="next" value="([^"]+)"/.exec(second.text)![1]!.replace(/&#x2F;|&#47;/g, "/");
    const code = totp.generate({ timestamp: Date.now() + 30_000 }); // the next step's code (the first one is spent)
    const consent = await b.post("/console/sign-in/two-factor", new URLSearchParams({ _csrf: csrf, next, code }));
    expect(consent.status).toBe(200);
    expect(consent.url).toMatch(/\/console\/oauth\/interaction\//);
    expect(consent.text).toContain("Connect Test Agent to Stageline");
  });

  it("the provider's own session never stands in for the console's: after a sign-out, or as another user, no silent code", async () => {
    const client = await register();
    const b = await signedInBrowser(admin);
    const verifier = oauth.generateRandomCodeVerifier();
    await authorize(b, client, verifier, "s1");
    // Signed out of the console (its session cookie gone), the oidc-provider cookies of the same browser stay.
    b.jar.remove(/^(__Host-)?stageline\.session$/);
    const again = await b.get(authUrl(client, verifier, "s2").href);
    expect(again.url).toMatch(/\/console\/sign-in\?next=/);
    // Another user signed in on that browser answers as themself, on a consent page of their own.
    const other = await createConsoleUser(t, "member");
    b.jar.add((await signInOverHttp(t.url, other.email, other.password)).cookie!);
    const page = await b.get(authUrl(client, verifier, "s3").href);
    expect(page.url).toMatch(/\/console\/oauth\/interaction\//);
    const { action, csrf } = formOf(page.text);
    const form = new URLSearchParams({ _csrf: csrf, decision: "allow", scopes: "items:read" });
    const done = await b.post(action, form);
    const tokens = await exchange(client, new URL(done.location!), verifier, "s3");
    const hashed = createHash("sha256").update(tokens.access_token).digest("base64url");
    expect((await rows()).find((r) => r.id === hashed)!.payload.accountId).toBe(other.id);
  });

  it("sends a browser that is not signed in to the console's sign-in, which comes back to the request", async () => {
    const client = await register();
    const page = await new TestBrowser(t.url).get(authUrl(client, oauth.generateRandomCodeVerifier(), "s").href);
    expect(page.url).toMatch(/\/console\/sign-in\?next=%2Fconsole%2Foauth%2Finteraction%2F/);
  });
});

describe("security headers (issue 39 item 3: /oauth pages carry the console's)", () => {
  /** The headers the console's helmet sets, as a console page carries them. */
  const HELMET = ["content-security-policy", "x-frame-options", "x-content-type-options", "referrer-policy", "cross-origin-resource-policy", "cross-origin-opener-policy", "strict-transport-security", "origin-agent-cluster", "x-dns-prefetch-control", "x-download-options", "x-permitted-cross-domain-policies", "x-xss-protection"];
  const pick = (h: Headers) => Object.fromEntries(HELMET.map((name) => [name, h.get(name)]));
  let consoleHeaders: Record<string, string | null>;
  beforeAll(async () => {
    consoleHeaders = pick((await fetch(`${t.url}/console/sign-in`)).headers);
    expect(consoleHeaders["x-frame-options"]).toBe("DENY");
    expect(consoleHeaders["x-content-type-options"]).toBe("nosniff");
    expect(consoleHeaders["content-security-policy"]).toContain("frame-ancestors 'none'");
  });

  it("error pages, JSON answers, redirects and unknown paths under /oauth carry the console's headers", async () => {
    const client = await register();
    const mismatch = authUrl(client, oauth.generateRandomCodeVerifier(), "s", { redirect: "http://127.0.0.1:9/elsewhere" });
    const unknownClient = new URL(mismatch);
    unknownClient.searchParams.set("client_id", "no-such-client");
    const answers = [
      await fetch(mismatch, { redirect: "manual" }),
      await fetch(unknownClient, { redirect: "manual" }),
      await fetch(authUrl(client, oauth.generateRandomCodeVerifier(), "s"), { redirect: "manual" }),
      await fetch(`${t.url}/oauth/token`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "grant_type=authorization_code&code=x" }),
      await fetch(`${t.url}/oauth/jwks`),
      await fetch(`${t.url}/oauth/no-such-page`),
    ];
    expect(answers.map((r) => r.status)).toEqual([400, 400, 303, 400, 200, 404]);
    expect(await answers[0]!.text()).toContain("redirect_uri did not match");
    for (const res of answers) expect(pick(res.headers)).toEqual(consoleHeaders);
  });

  it("a form_post answer may post to the client's redirect URI origin, and nowhere else", async () => {
    const client = await register();
    const b = await signedInBrowser(admin);
    const url = authUrl(client, oauth.generateRandomCodeVerifier(), "fp", { scope: "items:read" });
    url.searchParams.set("response_mode", "form_post");
    const { action, csrf } = formOf((await toConsent(b, url)).text);
    const done = await b.post(action, new URLSearchParams({ _csrf: csrf, decision: "allow", scopes: "items:read" }));
    expect(done.status).toBe(200);
    expect(done.text).toContain(`<form method="post" action="${REDIRECT}">`);
    const csp = done.headers.get("content-security-policy")!;
    const directives = (policy: string) => Object.fromEntries(policy.split(";").map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name, values]));
    const own = directives(consoleHeaders["content-security-policy"]!);
    const got = directives(csp);
    expect(got["form-action"]).toEqual([...own["form-action"]!, new URL(REDIRECT).origin]);
    expect(got["script-src"]).toEqual([...own["script-src"]!, expect.stringMatching(/^'sha256-[A-Za-z0-9+/=]+'$/)]);
    expect({ ...got, "form-action": [], "script-src": [] }).toEqual({ ...own, "form-action": [], "script-src": [] });
    expect({ ...pick(done.headers), "content-security-policy": null }).toEqual({ ...consoleHeaders, "content-security-policy": null });
  });
});

describe("attacks", () => {
  it("refuses an authorization request without PKCE, with plain PKCE, and a token request with the wrong verifier", async () => {
    const client = await register();
    const verifier = oauth.generateRandomCodeVerifier();
    const b = await signedInBrowser(admin);
    const missing = await b.get(authUrl(client, verifier, "s1", { challenge: null }).href);
    expect(new URL(missing.location!).searchParams.get("error")).toBe("invalid_request");
    const plain = await b.get(authUrl(client, verifier, "s2", { challenge: verifier, method: "plain" }).href);
    expect(new URL(plain.location!).searchParams.get("error")).toBe("invalid_request");

    const state = oauth.generateRandomState();
    const callback = await authorize(b, client, verifier, state);
    const wrong = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), oauth.validateAuthResponse(as, client, callback, state), REDIRECT, oauth.generateRandomCodeVerifier(), insecure());
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as { error: string }).error).toBe("invalid_grant");
  });

  it("a redirect URI that does not match exactly gets an error page, never a redirect", async () => {
    const client = await register();
    const b = await signedInBrowser(admin);
    for (const redirect of ["http://127.0.0.1:9/callback/", "http://127.0.0.1:9/callback?x=1", "https://evil.example/callback"]) {
      const page = await b.get(authUrl(client, "v".repeat(43), "s", { redirect }).href);
      expect(page.status).toBe(400);
      expect(page.location).toBeNull();
      expect(page.text).toMatch(/redirect_uri/);
    }
  });

  it("Dynamic Client Registration accepts API scopes in `scope` (MCP clients send them) and keeps only offline_access", async () => {
    const client = (await register({ scope: "items:read tasks:read offline_access" })) as Client & { scope?: string };
    expect(client.scope).toBe("offline_access");
    const bare = (await register({ scope: "items:read" })) as Client & { scope?: string };
    expect(bare.scope).toBeUndefined();
    // Such a client still gets its API scopes at consent.
    const verifier = oauth.generateRandomCodeVerifier();
    const tokens = await exchange(client, await authorize(await signedInBrowser(admin), client, verifier, "s1", ["items:write"]), verifier, "s1");
    expect(tokens.scope!.split(" ").sort()).toEqual(["items:read", "tasks:read"]);
    // An unknown scope is still refused.
    const res = await fetch(as.registration_endpoint!, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: [REDIRECT], token_endpoint_auth_method: "none", scope: "items:read admin:everything" }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe("invalid_client_metadata");
  });

  it("Dynamic Client Registration takes https or loopback redirect URIs only, and says which one it refused and why", async () => {
    const refused = async (uris: unknown[]) => {
      const answer = await registerRedirectUris(uris);
      expect(answer.status).toBe(400);
      // RFC 7591 section 3.2.2: the error code and a human-readable description, bounded and free of markup.
      expect(answer.error).toBe("invalid_redirect_uri");
      expect(answer.description.length).toBeLessThan(300);
      expect(answer.description).not.toMatch(/[<>]/);
      return answer.description;
    };
    expect(await refused(["http://evil.example/cb"])).toBe(
      'redirect_uris[0] "http://evil.example/cb" is http on a host that is not a loopback host (use https, or http only on a loopback address: 127.0.0.1, [::1] or localhost)',
    );
    expect(await refused(["https://app.example/cb", "javascript:alert(1)"])).toBe(
      'redirect_uris[1] "javascript:alert(1)" uses the javascript scheme (use https, or http only on a loopback address: 127.0.0.1, [::1] or localhost)',
    );
    expect(await refused(["https://app.example/cb#done"])).toBe('redirect_uris[0] "https://app.example/cb#done" has a fragment (#)');
    expect(await refused(["not a url"])).toBe('redirect_uris[0] "not%20a%20url" is not an absolute URL');
    expect(await refused([42])).toBe("redirect_uris[0] is not a string");
    expect(await refused([])).toBe("redirect_uris must list at least one URI");
    // Too long: named by its length, quoted cut to 100 characters.
    const long = `https://app.example/${"a".repeat(2100)}`;
    const tooLong = await refused([long]);
    expect(tooLong).toBe(`redirect_uris[0] "${long.slice(0, 100)}..." is 2120 characters long (at most 2000 characters)`);
    // Markup in a refused URI is quoted percent-encoded.
    const markup = await refused(['http://evil.example/<script>alert("x")</script>']);
    expect(markup).toContain('"http://evil.example/%3Cscript%3Ealert(%22x%22)%3C/script%3E"');
    await expect(register({ redirect_uris: ["https://app.example/cb"] })).resolves.toHaveProperty("client_id");
  });

  it("Dynamic Client Registration follows the console's rules: at most 10 exact URIs, no odd forms (issue 39 item 3)", async () => {
    const clients = async () => (await t.server.ctx.db.sql.query<{ n: number }>(`select count(*)::int as n from oauth_records where model = 'Client'`, []))[0]!.n;
    const before = await clients();
    const many = Array.from({ length: 500 }, (_, i) => `https://app.example/cb${i}`);
    expect(await registerRedirectUris(many)).toEqual({ status: 400, error: "invalid_redirect_uri", description: "redirect_uris lists 500 URIs (at most 10)" });
    expect(await registerRedirectUris(many.slice(0, 11))).toMatchObject({ status: 400, error: "invalid_redirect_uri" });
    const odd: [string, string][] = [
      ["https://*.example.com/cb", 'redirect_uris[0] "https://*.example.com/cb" has a wildcard (*) in its host'],
      ["http://evil.example@127.0.0.1/cb", 'redirect_uris[0] "http://evil.example@127.0.0.1/cb" carries a user name or password'],
      ["http:\\\\127.0.0.1\\cb", 'redirect_uris[0] "http:%5C%5C127.0.0.1%5Ccb" contains a backslash'],
      ["https://a.example\\@b", 'redirect_uris[0] "https://a.example%5C@b" contains a backslash'],
      ["http://0x7f000001/cb", 'redirect_uris[0] "http://0x7f000001/cb" has a numeric host form that is read as 127.0.0.1'],
      ["http://0177.0.0.1/cb", 'redirect_uris[0] "http://0177.0.0.1/cb" has a numeric host form'],
      ["http://2130706433/cb", 'redirect_uris[0] "http://2130706433/cb" has a numeric host form'],
      ["http://127.0.0.1/c\tb", 'redirect_uris[0] "http://127.0.0.1/c%09b" contains a space or a control character'],
    ];
    for (const [uri, description] of odd) {
      const answer = await registerRedirectUris([uri]);
      expect(answer).toMatchObject({ status: 400, error: "invalid_redirect_uri" });
      expect(answer.description.startsWith(description)).toBe(true);
    }
    expect(await clients()).toBe(before);
    await expect(register({ redirect_uris: many.slice(0, 10) })).resolves.toHaveProperty("client_id");
  });

  it("another company's user cannot answer someone else's authorization request", async () => {
    const client = await register();
    const victim = await signedInBrowser(admin);
    const page = await toConsent(victim, authUrl(client, oauth.generateRandomCodeVerifier(), "s"));
    const { action } = formOf(page.text);
    const other = await t.newCompany("Other Co");
    const intruder = await signedInBrowser(await createConsoleUser(t, "owner", other.companyId));
    // The intruder knows the interaction URL, but not the victim's interaction cookie: nothing to see or answer.
    const seen = await intruder.get(action);
    expect(seen.status).toBe(404);
    const csrfPage = await intruder.get("/console/profile");
    const form = new URLSearchParams({ _csrf: formOf(csrfPage.text).csrf, decision: "allow", scopes: "items:read" });
    const answered = await intruder.post(action, form);
    expect(answered.status).toBe(404);
    expect((await rows()).filter((r) => r.model === "Grant" && r.company_id === other.companyId)).toEqual([]);
  });

  it("another app cannot revoke or refresh with an app's refresh token", async () => {
    const victim = await register();
    const thief = await register({ client_name: "Thief" });
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const tokens = await exchange(victim, await authorize(await signedInBrowser(admin), victim, verifier, state), verifier, state);
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, thief, oauth.None(), tokens.refresh_token!, insecure()));
    const stolen = await oauth.refreshTokenGrantRequest(as, thief, oauth.None(), tokens.refresh_token!, insecure());
    expect(stolen.status).toBe(400);
    // The victim's refresh token still works: the thief neither revoked nor used it.
    const own = await oauth.processRefreshTokenResponse(as, victim, await oauth.refreshTokenGrantRequest(as, victim, oauth.None(), tokens.refresh_token!, insecure()));
    expect(own.access_token).toBeTruthy();
  });

  it("a member cannot grant an admin-only scope, even by posting it", async () => {
    const member = await createConsoleUser(t, "member");
    const client = await register();
    const b = await signedInBrowser(member);
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const page = await toConsent(b, authUrl(client, verifier, state, { scope: "items:read hooks:manage" }));
    expect(page.text).toMatch(/id="scope-hooks:manage"[^>]*disabled/);
    const { action, csrf } = formOf(page.text);
    const form = new URLSearchParams({ _csrf: csrf, decision: "allow" });
    form.append("scopes", "items:read");
    form.append("scopes", "hooks:manage");
    const done = await b.post(action, form);
    const tokens = await exchange(client, new URL(done.location!), verifier, state);
    expect(tokens.scope).toBe("items:read");
  });

  it("denying sends the app access_denied and grants nothing", async () => {
    const client = await register();
    const b = await signedInBrowser(admin);
    const page = await toConsent(b, authUrl(client, oauth.generateRandomCodeVerifier(), "s"));
    const { action, csrf } = formOf(page.text);
    const done = await b.post(action, new URLSearchParams({ _csrf: csrf, decision: "deny" }));
    expect(new URL(done.location!).searchParams.get("error")).toBe("access_denied");
  });

  it("the consent form refuses a post without the CSRF token", async () => {
    const client = await register();
    const b = await signedInBrowser(admin);
    const page = await toConsent(b, authUrl(client, oauth.generateRandomCodeVerifier(), "s"));
    const done = await b.post(formOf(page.text).action, new URLSearchParams({ decision: "allow", scopes: "items:read" }));
    expect(done.status).toBe(403);
  });
});

