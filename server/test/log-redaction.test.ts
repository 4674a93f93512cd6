/**
 * No credential reaches the logs (issue 12, issue 19 item 3): the server runs as `npm start` runs it, at
 * LOG_LEVEL=info, so every request is logged with its URL and headers; a key sent as `x-api-key`, as `Authorization:
 * Bearer` or as `?api_key=` (also to the MCP endpoint), the admin token, session cookies, CSRF tokens, unknown credential headers (such as
 * `x-forwarded-authorization`), an invitation link's token and the passwords used must all stay out of the whole
 * run's output (the demo key and password, printed once at start on purpose, aside). Also checks that a non-production server says its mode at start.
 */
import { redactHeaders, safeUrl } from "../src/logger";
import { DEMO_USER_EMAIL } from "../src/seed/demo";
import { acceptInviteOverHttp, consoleOverHttp, signInOverHttp } from "./helpers/console-browser";
import {
  createServerStore,
  killServerProcesses,
  startServerProcess,
  type ServerProcess,
  type ServerStore,
} from "./helpers/server-process";

describe("request logs", () => {
  let store: ServerStore;
  let server: ServerProcess;
  beforeAll(async () => {
    store = createServerStore();
    server = await startServerProcess(store, { LOG_LEVEL: "info" });
    if (!server.demoApiKey) throw new Error(`the first start did not seed the demo company:\n${server.output()}`);
  }, 60_000);
  afterAll(async () => {
    await killServerProcesses();
    await store?.remove();
  });

  it("no secret a request carried appears anywhere in the run's output, however it was sent", async () => {
    const key = server.demoApiKey!;
    const demoPassword = /^Demo password: (\S+)$/m.exec(server.output())![1]!;
    const secrets = {
      cookie: "__Host-stageline_session=session-secret-value-123",
      csrf: "csrf-secret-value-456",
      admin: "admin-token-value-789",
      proxy: "Basic cHJveHk6c2VjcmV0",
      forwarded: "Bearer forwarded-secret-value-abc",
      custom: "custom-secret-value-def",
      queryToken: "query-token-value-ghi",
      invitePassword: "violet harbor lantern quiz",
    };
    // Headers: the known ones, and unknown ones whose names say they carry a credential.
    await fetch(`${server.url}/v1/ext/me`, { headers: { "x-api-key": key } });
    await fetch(`${server.url}/v1/ext/me`, {
      headers: {
        authorization: `Bearer ${key}`,
        cookie: secrets.cookie,
        "x-csrf-token": secrets.csrf,
        "proxy-authorization": secrets.proxy,
        "x-forwarded-authorization": secrets.forwarded,
        "x-vendor-secret": secrets.custom,
      },
    });
    // The MCP endpoint (issue 26): the key as Bearer and as x-api-key, a tool call, and a refused Origin.
    const mcpCall = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "describe_pipelines", arguments: {} } };
    const mcpAuths: Record<string, string>[] = [{ authorization: `Bearer ${key}` }, { "x-api-key": key }, { authorization: `Bearer ${key}`, origin: "https://evil.example" }];
    for (const auth of mcpAuths) {
      await fetch(`${server.url}/v1/ext/mcp`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" },
        body: JSON.stringify(mcpCall),
      });
    }
    await fetch(`${server.url}/admin/companies`, { headers: { "x-admin-token": secrets.admin } });
    // Query strings: a key sent as ?api_key= (401) and a token-named parameter.
    expect((await fetch(`${server.url}/v1/ext/me?api_key=${encodeURIComponent(key)}`)).status).toBe(401);
    await fetch(`${server.url}/v1/ext/pipelines?access_token=${secrets.queryToken}&limit=5`, { headers: { "x-api-key": key } });
    // The console: a session cookie, and an invitation link (its token in the path) opened and accepted.
    const signedIn = await signInOverHttp(server.url, DEMO_USER_EMAIL, demoPassword);
    expect(signedIn.status).toBe(303);
    const sessionId = signedIn.cookie!.split("=")[1]!;
    expect((await fetch(`${server.url}/console/keys`, { headers: { cookie: signedIn.cookie! } })).status).toBe(200);
    const owner = await consoleOverHttp(server.url, { email: DEMO_USER_EMAIL, password: demoPassword });
    expect((await owner.post("/console/team/invites", new URLSearchParams({ email: "logged@demo.example", role: "owner" }), "/console/team")).status).toBe(303);
    const inviteToken = /\/console\/invite\/([A-Za-z0-9_-]{43})/.exec((await owner.get("/console/team")).text)![1]!;
    const accepted = await acceptInviteOverHttp(server.url, inviteToken, secrets.invitePassword);
    expect(accepted.status).toBe(303);
    const { csrfCookie, csrfToken } = accepted;
    const newSession = accepted.sessionCookie!.split("=")[1]!;
    // The invitation page's style sheet is requested with the link as its Referer (Referrer-Policy: same-origin).
    await fetch(`${server.url}/console/assets/console.css`, { headers: { referer: `${server.url}/console/invite/${inviteToken}` } });
    // A used link is a 404 page: logged like any other request, the token masked all the same.
    expect((await fetch(`${server.url}/console/invite/${inviteToken}?again=1`)).status).toBe(404);

    const deadline = Date.now() + 5_000;
    const expected = 20; // the requests above
    while (server.logs().filter((l) => l.req).length < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(server.logs().filter((l) => l.req).length).toBeGreaterThanOrEqual(expected);

    // The whole run's output, from the first line, but for the two start-up lines that print the demo key and
    // password once on purpose (main.ts).
    const output = server
      .output()
      .split("\n")
      .filter((line) => !/^Demo (API key|password): /.test(line))
      .join("\n");
    const used = [key, key.slice(-20), demoPassword, sessionId, newSession, csrfCookie.split("=")[1]!, csrfToken, inviteToken, inviteToken.slice(0, 20), ...Object.values(secrets)];
    for (const secret of used) expect({ secret, found: output.includes(secret) }).toEqual({ secret, found: false });
    for (const secret of ["session-secret-value-123", "forwarded-secret-value-abc"]) expect(output).not.toContain(secret);

    // What is logged instead: the route with the secret masked, and the header names with their values redacted.
    const urls = server.logs().map((l) => (l.req as { url?: string } | undefined)?.url);
    expect(urls).toContain("/console/invite/[redacted]");
    expect(urls.filter((u) => u?.startsWith("/console/"))).toContain("/console/invite/[redacted]?again=1");
    expect(urls).toContain("/v1/ext/me?api_key=[redacted]");
    expect(urls).toContain("/v1/ext/pipelines?access_token=[redacted]&limit=5");
    const headers = server.logs().map((l) => (l.req as { headers?: Record<string, string> } | undefined)?.headers ?? {});
    expect(headers.some((h) => h["x-forwarded-authorization"] === "[redacted]" && h["x-vendor-secret"] === "[redacted]")).toBe(true);
    expect(headers.map((h) => h.referer)).toContain(`${server.url}/console/invite/[redacted]`);
    expect(server.logs().some((l) => l.req && ("query" in (l.req as object) || "params" in (l.req as object)))).toBe(false);
  });

  it("says loudly at start that it is not in production mode", () => {
    expect(server.output()).toMatch(/WARNING: test mode \(NODE_ENV=test\): webhook targets may use http and loopback addresses/);
  });
});

describe("safeUrl", () => {
  it.each([
    ["/console/invite/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-abcde", "/console/invite/[redacted]"],
    ["/console/invite/short", "/console/invite/[redacted]"],
    ["/v1/ext/items/0193a5b2-7c1d-7e3f-8a9b-0c1d2e3f4a5b", "/v1/ext/items/0193a5b2-7c1d-7e3f-8a9b-0c1d2e3f4a5b"],
    ["/v1/ext/x/sl_abcdefgh_secret", "/v1/ext/x/[redacted]"],
    ["/v1/ext/items?limit=10&cursor=abc", "/v1/ext/items?limit=10&cursor=abc"],
    ["/v1/ext/me?API_KEY=x&Authorization=y&session_id=z&x=whsec_abc", "/v1/ext/me?API_KEY=[redacted]&Authorization=[redacted]&session_id=[redacted]&x=[redacted]"],
    ["/v1/ext/me?api%5Fkey=x&%zz=1", "/v1/ext/me?api%5Fkey=[redacted]&%zz=1"],
    ["/v1/ext/me?sl_abcdefgh_secret", "/v1/ext/me?[redacted]"],
  ])("logs %s as %s", (url, logged) => {
    expect(safeUrl(url)).toBe(logged);
  });

  it("redacts every header whose name says it carries a credential, and masks the URLs of Referer and Location", () => {
    const headers = {
      "x-forwarded-authorization": "a",
      "x-api-key": "b",
      "set-cookie": ["c"],
      "x-my-secret": "d",
      "x-session": "e",
      "content-type": "text/html",
      "user-agent": "f",
      referer: "https://s.example/console/invite/tok?api_key=k#frag",
      location: "/console/invite/tok",
    };
    expect(redactHeaders(headers)).toEqual({
      "x-forwarded-authorization": "[redacted]",
      "x-api-key": "[redacted]",
      "set-cookie": "[redacted]",
      "x-my-secret": "[redacted]",
      "x-session": "[redacted]",
      "content-type": "text/html",
      "user-agent": "f",
      referer: "https://s.example/console/invite/[redacted]?api_key=[redacted]",
      location: "/console/invite/[redacted]",
    });
  });
});
