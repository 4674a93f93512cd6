/**
 * The authorization server as `npm start` runs it (issue 32): the built server as an OS process at LOG_LEVEL=info,
 * where no authorization code, access or refresh token, PKCE verifier or client secret of a whole flow may appear in
 * the output; and, on PostgreSQL, a second process on the same database (same PUBLIC_URL, as behind one load
 * balancer) completes a refresh of tokens the first issued and sees a grant the first revoked.
 */
import { createServer, type AddressInfo } from "node:net";
import { createHash } from "node:crypto";
import { DEMO_USER_EMAIL } from "../src/seed/demo";
import { signInOverHttp } from "./helpers/console-browser";
import { formOf, loadOauth, TestBrowser, type Oauth } from "./helpers/oauth-flow";
import { createServerStore, killServerProcesses, startServerProcess, type ServerProcess, type ServerStore } from "./helpers/server-process";

const onPostgres = !!process.env.TEST_DATABASE_URL;
const REDIRECT = "http://127.0.0.1:9/callback";

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

let store: ServerStore;
let a: ServerProcess;
let oauth: Oauth;
let publicUrl = "";
const secrets: string[] = [];

beforeAll(async () => {
  store = createServerStore();
  const port = await freePort();
  publicUrl = `http://127.0.0.1:${port}`;
  a = await startServerProcess(store, { LOG_LEVEL: "info", PORT: String(port), PUBLIC_URL: publicUrl, RATE_LIMIT_PER_MINUTE: "10000" });
  oauth = await loadOauth();
}, 120_000);
afterAll(async () => {
  await killServerProcesses();
  await store?.remove();
});

const insecure = () => ({ [oauth.allowInsecureRequests]: true });
type Tokens = { access_token: string; refresh_token?: string };

/** Records issued under a grant whose `Grant` record is gone, in the processes' schema (PostgreSQL only). */
async function orphanRecords(): Promise<number> {
  const { Client } = await import("pg");
  const url = new URL(store.databaseUrl!);
  const schema = url.searchParams.get("schema")!;
  const client = new Client({ connectionString: process.env.TEST_DATABASE_URL });
  await client.connect();
  try {
    const res = await client.query<{ n: number }>(
      `select count(*)::int as n from "${schema}".oauth_records r where r.grant_id is not null and r.model <> 'Grant'
         and not exists (select 1 from "${schema}".oauth_records g where g.model = 'Grant' and g.id = r.grant_id)`,
    );
    return res.rows[0]!.n;
  } finally {
    await client.end();
  }
}

type AS = Awaited<ReturnType<Oauth["processDiscoveryResponse"]>>;
type App = { client_id: string; client_secret: string };

/** Registers a confidential client and runs the code flow through the console as the demo owner, up to the code. */
async function authorizeApp(): Promise<{ as: AS; client: App; params: URLSearchParams; verifier: string }> {
  const issuer = new URL(publicUrl);
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: "oauth2", ...insecure() }));
  const reg = await oauth.dynamicClientRegistrationRequest(as, { redirect_uris: [REDIRECT], client_name: "Log Agent", token_endpoint_auth_method: "client_secret_basic" }, insecure());
  const client = (await oauth.processDynamicClientRegistrationResponse(reg)) as unknown as App & { registration_access_token: string };
  expect(client.client_secret).toBeTruthy();
  const password = /^Demo password: (\S+)$/m.exec(a.output())![1]!;
  const b = new TestBrowser(a.url);
  b.jar.add((await signInOverHttp(a.url, DEMO_USER_EMAIL, password)).cookie!);
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint!);
  url.search = new URLSearchParams({
    client_id: client.client_id,
    redirect_uri: REDIRECT,
    response_type: "code",
    scope: "items:read offline_access",
    prompt: "consent",
    state,
    resource: `${publicUrl}/v1/ext`,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
  }).toString();
  const page = await b.get(url.href);
  const { action, csrf } = formOf(page.text);
  const form = new URLSearchParams({ _csrf: csrf, decision: "allow" });
  form.append("scopes", "items:read");
  form.append("scopes", "offline_access");
  const done = await b.post(action, form);
  const callback = new URL(done.location!);
  secrets.push(callback.searchParams.get("code")!, verifier, client.client_secret, client.registration_access_token);
  return { as, client, params: oauth.validateAuthResponse(as, client, callback, state), verifier };
}

/** `authorizeApp`, then the code exchanged for tokens. */
async function flow(): Promise<{ as: AS; client: App; tokens: Tokens }> {
  const { as, client, params, verifier } = await authorizeApp();
  const auth = oauth.ClientSecretBasic(client.client_secret);
  const res = await oauth.authorizationCodeGrantRequest(as, client, auth, params, REDIRECT, verifier, insecure());
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, res);
  secrets.push(tokens.access_token, tokens.refresh_token!);
  return { as, client, tokens };
}

it("no code, token, verifier or client secret of a whole flow appears in the server's output", async () => {
  const { as, client, tokens } = await flow();
  const auth = oauth.ClientSecretBasic(client.client_secret);
  const refreshed = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token!, insecure()));
  secrets.push(refreshed.access_token, refreshed.refresh_token!);
  await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, auth, refreshed.refresh_token!, insecure()));
  // Requests were logged (so the check below means something), and none carries a secret.
  expect(a.output()).toContain("/oauth/token");
  expect(a.output()).toContain("/console/oauth/interaction/");
  for (const secret of secrets) {
    expect(a.output()).not.toContain(secret);
    expect(a.output()).not.toContain(createHash("sha256").update(secret).digest("base64url"));
  }
}, 60_000);

// Two processes on one database need PostgreSQL (the embedded PGlite belongs to the one process that opened it).
if (onPostgres) {
  describe("a second server process on the same PostgreSQL database", () => {
    let b: ServerProcess;
    beforeAll(async () => {
      b = await startServerProcess(store, { LOG_LEVEL: "warn", PUBLIC_URL: publicUrl });
    }, 120_000);

    it("refreshes tokens the first issued, and a reuse at the first revokes the grant for both", async () => {
      const { as, client, tokens } = await flow();
      const auth = oauth.ClientSecretBasic(client.client_secret);
      const atB = { ...as, token_endpoint: `${b.url}/oauth/token` };
      const atA = { ...as, token_endpoint: `${a.url}/oauth/token` };
      const r1 = await oauth.processRefreshTokenResponse(atB, client, await oauth.refreshTokenGrantRequest(atB, client, auth, tokens.refresh_token!, insecure()));
      expect(r1.refresh_token).not.toBe(tokens.refresh_token);
      const reuse = await oauth.refreshTokenGrantRequest(atA, client, auth, tokens.refresh_token!, insecure());
      expect(reuse.status).toBe(400);
      const after = await oauth.refreshTokenGrantRequest(atB, client, auth, r1.refresh_token!, insecure());
      expect(after.status).toBe(400);
      expect(((await after.json()) as { error: string }).error).toBe("invalid_grant");
    }, 60_000);

    it("a code or a refresh token sent to both processes at once is honoured at most once; no record outlives the grant (issue 39)", async () => {
      const at = (as: AS, origin: string) => ({ ...as, token_endpoint: `${origin}/oauth/token` });
      const origins = [a.url, b.url, a.url, b.url];
      for (let trial = 0; trial < 3; trial++) {
        const code = await authorizeApp();
        const auth = oauth.ClientSecretBasic(code.client.client_secret);
        const exchanges = await Promise.all(
          origins.map((o) => oauth.authorizationCodeGrantRequest(at(code.as, o), code.client, auth, code.params, REDIRECT, code.verifier, insecure())),
        );
        expect(exchanges.filter((r) => r.status === 200).length).toBeLessThanOrEqual(1);
        expect(exchanges.filter((r) => r.status === 400).length).toBeGreaterThanOrEqual(origins.length - 1);

        const { as, client, tokens } = await flow();
        const refreshes = await Promise.all(
          origins.map((o) => oauth.refreshTokenGrantRequest(at(as, o), client, oauth.ClientSecretBasic(client.client_secret), tokens.refresh_token!, insecure())),
        );
        const issued = ((await Promise.all(refreshes.map((r) => r.json()))) as { refresh_token?: string }[]).filter((x) => x.refresh_token);
        expect(issued.length).toBeLessThanOrEqual(1);
        // Presented more than once: handled as reuse, so no rotated refresh token goes on rotating.
        for (const x of issued) {
          expect((await oauth.refreshTokenGrantRequest(at(as, a.url), client, oauth.ClientSecretBasic(client.client_secret), x.refresh_token!, insecure())).status).toBe(400);
        }
        expect(await orphanRecords()).toBe(0);
      }
    }, 120_000);
  });
}
