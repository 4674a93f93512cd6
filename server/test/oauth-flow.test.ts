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
}

function authUrl(client: Client, verifier: string, state: string, opts: AuthRequest = {}): URL {
  const url = new URL(as.authorization_endpoint!);
  url.searchParams.set("client_id", client.client_id);
  url.searchParams.set("redirect_uri", opts.redirect ?? REDIRECT);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("scope", opts.scope ?? "items:read items:write tasks:read offline_access");
  url.searchParams.set("state", state);
  url.searchParams.set("resource", opts.resource ?? rest);
  // A refresh token needs `offline_access` with `prompt=consent` (OpenID Connect Core 11; the MCP SDK sends both).
  if (url.searchParams.get("scope")!.split(" ").includes("offline_access")) url.searchParams.set("prompt", "consent");
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

  it("a request without a scope is offered every API scope on the consent page", async () => {
    const client = await register();
    const url = authUrl(client, oauth.generateRandomCodeVerifier(), "s");
    url.searchParams.delete("scope");
    url.searchParams.delete("prompt");
    const page = await toConsent(await signedInBrowser(admin), url);
    const offered = [...page.text.matchAll(/name="scopes" type="checkbox" value="([^"]+)"/g)].map((m) => m[1]);
    expect(offered).toEqual(["items:read", "items:write", "tasks:read", "tasks:write", "hooks:manage"]);
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
      const res = await fetch(as.registration_endpoint!, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ redirect_uris: uris, token_endpoint_auth_method: "none" }),
      });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: string; error_description: string };
      // RFC 7591 section 3.2.2: the error code and a human-readable description, bounded and free of markup.
      expect(body.error).toBe("invalid_redirect_uri");
      expect(body.error_description.length).toBeLessThan(300);
      expect(body.error_description).not.toMatch(/[<>]/);
      return body.error_description;
    };
    expect(await refused(["http://evil.example/cb"])).toBe(
      'redirect_uris[0] "http://evil.example/cb" is http on a host that is not a loopback host (use https, or http on 127.0.0.1, [::1] or localhost)',
    );
    expect(await refused(["https://app.example/cb", "javascript:alert(1)"])).toBe(
      'redirect_uris[1] "javascript:alert(1)" uses the javascript scheme (use https, or http on 127.0.0.1, [::1] or localhost)',
    );
    expect(await refused(["https://app.example/cb#done"])).toBe('redirect_uris[0] "https://app.example/cb#done" has a fragment (#)');
    expect(await refused(["not a url"])).toBe('redirect_uris[0] "not%20a%20url" is not an absolute URL');
    expect(await refused([42])).toBe("redirect_uris[0] is not a string");
    expect(await refused([])).toBe("redirect_uris must list at least one URI");
    // Too long: named by its length, quoted cut to 100 characters.
    const long = `https://app.example/${"a".repeat(2100)}`;
    const tooLong = await refused([long]);
    expect(tooLong).toBe(`redirect_uris[0] "${long.slice(0, 100)}..." is 2120 characters long (at most 2000)`);
    // Markup in a refused URI is quoted percent-encoded.
    const markup = await refused(['http://evil.example/<script>alert("x")</script>']);
    expect(markup).toContain('"http://evil.example/%3Cscript%3Ealert(%22x%22)%3C/script%3E"');
    await expect(register({ redirect_uris: ["https://app.example/cb"] })).resolves.toHaveProperty("client_id");
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

