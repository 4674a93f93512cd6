/**
 * Client ID Metadata Documents (issue 32; CONTRACT "Connect with OAuth 2.1"): an app whose `client_id` is an https
 * URL is known by fetching that URL, through the SSRF guard of webhook delivery (oauth/metadata-fetch.ts). The
 * document is served here by a loopback https server with a self-signed certificate made for the test; the server
 * trusts that one certificate through `config.oauthMetadataCa` (a test-only setting, never read from the
 * environment), and the fetch still passes the guard, which admits loopback only because test servers do.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import https from "node:https";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { createHash } from "node:crypto";
import { startTestServer, type TestServer } from "./helpers/test-server";
import { createConsoleUser, signInOverHttp } from "./helpers/console-browser";
import { formOf, loadOauth, TestBrowser, type Oauth } from "./helpers/oauth-flow";

const REDIRECT = "http://127.0.0.1:9/cimd-callback";

let t: TestServer;
let oauth: Oauth;
let docs: https.Server;
let base = "";
let fetched: string[] = [];
const bodies: Record<string, () => string> = {};
/** Response headers of a document path beside its content type (e.g. Cache-Control). */
const docHeaders: Record<string, Record<string, string>> = {};

beforeAll(async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "cimd-"));
  execFileSync("openssl", [
    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
    "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
    "-keyout", path.join(dir, "key.pem"), "-out", path.join(dir, "cert.pem"),
  ], { stdio: "ignore" });
  const cert = readFileSync(path.join(dir, "cert.pem"), "utf8");
  const key = readFileSync(path.join(dir, "key.pem"), "utf8");
  rmSync(dir, { recursive: true, force: true });
  docs = https.createServer({ cert, key }, (req, res) => {
    fetched.push(req.url ?? "");
    const body = bodies[req.url ?? ""];
    if (!body) return res.writeHead(404).end();
    res.writeHead(200, { "content-type": "application/json", ...docHeaders[req.url ?? ""] }).end(body());
  });
  await new Promise<void>((resolve) => docs.listen(0, "127.0.0.1", resolve));
  base = `https://localhost:${(docs.address() as AddressInfo).port}`;
  t = await startTestServer({ oauthMetadataCa: cert });
  oauth = await loadOauth();
}, 60_000);
afterAll(async () => {
  await t?.close();
  docs?.close();
});

function authUrl(clientId: string, verifier: string, state: string): URL {
  const url = new URL(`${t.url}/oauth/auth`);
  url.search = new URLSearchParams({
    client_id: clientId,
    redirect_uri: REDIRECT,
    response_type: "code",
    scope: "items:read tasks:read",
    state,
    resource: `${t.url}/v1/ext/mcp`,
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
  }).toString();
  return url;
}

it("knows an app by its metadata document URL: the consent page names it and the code flow completes", async () => {
  const clientId = `${base}/apps/agent.json`;
  bodies["/apps/agent.json"] = () =>
    JSON.stringify({ client_id: clientId, client_name: "Metadata Agent", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none", grant_types: ["authorization_code", "refresh_token"], response_types: ["code"] });
  const admin = await createConsoleUser(t, "admin");
  const b = new TestBrowser(t.url);
  b.jar.add((await signInOverHttp(t.url, admin.email, admin.password)).cookie!);
  const verifier = oauth.generateRandomCodeVerifier();
  const page = await b.get(authUrl(clientId, verifier, "st").href);
  expect(page.status).toBe(200);
  expect(page.text).toContain("Metadata Agent");
  expect(page.text).toContain("127.0.0.1:9");
  expect(fetched).toContain("/apps/agent.json");
  const { action, csrf } = formOf(page.text);
  const form = new URLSearchParams({ _csrf: csrf, decision: "allow" });
  form.append("scopes", "items:read");
  form.append("scopes", "tasks:read");
  const done = await b.post(action, form);
  const callback = new URL(done.location!);
  const as = { issuer: new URL(t.url).origin, token_endpoint: `${t.url}/oauth/token` };
  const client = { client_id: clientId };
  const params = oauth.validateAuthResponse(as, client, callback, "st");
  const res = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT, verifier, { [oauth.allowInsecureRequests]: true });
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, res);
  expect(tokens.scope!.split(" ").sort()).toEqual(["items:read", "tasks:read"]);
  const rows = await t.server.ctx.db.sql.query<{ client_id: string; company_id: string }>(
    `select client_id, company_id from oauth_records where model = 'AccessToken' and client_id = $1`,
    [clientId],
  );
  expect(rows).toEqual([{ client_id: clientId, company_id: t.companyId }]);

  // The app is named for the resource side and the Connected apps page by a marked `Client` record (no company),
  // which the provider itself never reads: a changed document is fetched again and wins.
  const named = await t.server.ctx.db.sql.query<{ payload: Record<string, unknown>; company_id: string | null }>(
    `select payload, company_id from oauth_records where model = 'Client' and id = $1`,
    [clientId],
  );
  expect(named).toEqual([{ payload: { client_id: clientId, client_name: "Metadata Agent", stageline_metadata_document: true }, company_id: null }]);
  const grants = await fetch(`${t.url}/v1/ext/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${tokens.access_token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "describe_pipelines", arguments: {} } }),
  });
  expect(grants.status).toBe(200);
  const { oauthProvider } = await import("../src/oauth/provider");
  const provider = await oauthProvider(t.server.ctx);
  const resolved = await provider.Client.find(clientId);
  expect(resolved?.redirectUris).toEqual([REDIRECT]);
});

it("refuses a document whose client_id differs, one that is too large, and one whose redirect URI is neither https nor loopback", async () => {
  const cases: [string, () => string][] = [
    ["/apps/liar.json", () => JSON.stringify({ client_id: `${base}/apps/other.json`, redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" })],
    ["/apps/huge.json", () => JSON.stringify({ client_id: `${base}/apps/huge.json`, redirect_uris: [REDIRECT], token_endpoint_auth_method: "none", client_name: "x".repeat(40_000) })],
    ["/apps/plain-http.json", () => JSON.stringify({ client_id: `${base}/apps/plain-http.json`, redirect_uris: ["http://evil.example/cb"], token_endpoint_auth_method: "none" })],
  ];
  for (const [p, body] of cases) {
    bodies[p] = body;
    const page = await new TestBrowser(t.url).get(authUrl(`${base}${p}`, "v".repeat(43), "s").href);
    expect(page.status).toBe(400);
    expect(page.location).toBeNull();
  }
});

it("never fetches a metadata document from a private or link-local address (the SSRF guard)", async () => {
  fetched = [];
  for (const clientId of ["https://10.0.0.1/app.json", "https://169.254.169.254/latest/meta-data.json", "https://[fd00::1]/app.json"]) {
    const page = await new TestBrowser(t.url).get(authUrl(clientId, "v".repeat(43), "s").href);
    expect(page.status).toBe(400);
    expect(page.location).toBeNull();
  }
  // An http client_id is no metadata document at all.
  const plain = await new TestBrowser(t.url).get(authUrl(`http://localhost:1/app.json`, "v".repeat(43), "s").href);
  expect(plain.status).toBe(400);
  expect(fetched).toEqual([]);
});

it("the metadata fetch itself refuses non-public addresses, and loopback in production mode (DNS checked at connect)", async () => {
  const { guardedMetadataFetch } = await import("../src/oauth/metadata-fetch");
  const test = guardedMetadataFetch({ production: false });
  const prod = guardedMetadataFetch({ production: true });
  await expect(test("https://10.0.0.1/app.json")).rejects.toThrow(/refused/);
  await expect(test("https://[fe80::1]/app.json")).rejects.toThrow(/refused/);
  await expect(prod("https://127.0.0.1/app.json")).rejects.toThrow(/refused/);
  // A hostname is judged on the addresses it resolves to, inside the connection's own lookup.
  await expect(prod(`${base}/apps/agent.json`)).rejects.toThrow(/refused: localhost resolves to/);
  await expect(test("http://localhost/app.json")).rejects.toThrow(/https only/);
});

describe("a metadata document is fetched at most once per authorization request, cached within its Cache-Control (issue 39 item 3)", () => {
  const agent = (p: string) => {
    const clientId = `${base}${p}`;
    bodies[p] = () => JSON.stringify({ client_id: clientId, client_name: "Cached Agent", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" });
    return clientId;
  };
  const authorize = async (clientId: string) => (await new TestBrowser(t.url).get(authUrl(clientId, "v".repeat(43), "s").href)).status;
  const count = (p: string) => fetched.filter((u) => u === p).length;

  it("a document that cannot be fetched is tried once, not again by the error handler", async () => {
    fetched = [];
    expect(await authorize(`${base}/apps/missing.json`)).toBe(400);
    expect(count("/apps/missing.json")).toBe(1);
    // The next authorization request tries again (a failure is not cached).
    expect(await authorize(`${base}/apps/missing.json`)).toBe(400);
    expect(count("/apps/missing.json")).toBe(2);
  });

  it("keeps a document as long as its max-age says, at most one hour, and not at all when it says no-store", async () => {
    fetched = [];
    const cached = agent("/apps/max-age.json");
    docHeaders["/apps/max-age.json"] = { "cache-control": "public, max-age=600" };
    const uncached = agent("/apps/no-store.json");
    docHeaders["/apps/no-store.json"] = { "cache-control": "no-store" };
    const day = agent("/apps/a-day.json");
    docHeaders["/apps/a-day.json"] = { "cache-control": "max-age=86400" };
    for (const id of [cached, uncached, day, cached, uncached, day]) expect(await authorize(id)).toBe(200); // the console's sign-in page
    expect([count("/apps/max-age.json"), count("/apps/no-store.json"), count("/apps/a-day.json")]).toEqual([1, 2, 1]);
    // An hour and a second later the day-long document is fetched again; the 10-minute one too.
    const now = Date.now();
    const later = jest.spyOn(Date, "now").mockReturnValue(now + 3_601_000);
    try {
      expect(await authorize(day)).toBe(200);
      expect(await authorize(cached)).toBe(200);
    } finally {
      later.mockRestore();
    }
    expect([count("/apps/max-age.json"), count("/apps/a-day.json")]).toEqual([2, 2]);
  });

  it("never fetches a client_id URL without a path", async () => {
    fetched = [];
    for (const clientId of [base, `${base}/`, `${base}?app=1`]) {
      const page = await new TestBrowser(t.url).get(authUrl(clientId, "v".repeat(43), "s").href);
      expect(page.status).toBe(400);
      expect(page.text).toContain("must have a path");
    }
    expect(fetched).toEqual([]);
  });
});
