/**
 * The OAuth consent page in a real headless Chromium (issue 32): an app registered by Dynamic Client Registration
 * asks for three scopes; the signed-in user sees the app's name and redirect host, unticks one scope by its label,
 * allows, and the browser lands on the app's loopback redirect URI with a code (through the page's CSP, which admits
 * that one origin as a form target); the token carries only the two scopes left. axe-core runs on the consent page.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createHash } from "node:crypto";
import { BROWSER_TEST_TIMEOUT_MS, clickAndLoad, expectNoSeriousAxeViolations, signIn, useConsoleTestServer } from "./helpers/console-browser";
import { startTestServer } from "./helpers/test-server";
import { loadOauth } from "./helpers/oauth-flow";

jest.setTimeout(BROWSER_TEST_TIMEOUT_MS);

const env = useConsoleTestServer("admin", () => startTestServer());
let app: http.Server;
let redirect = "";
beforeAll(async () => {
  app = http.createServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>App</title><h1>Connected</h1>"));
  await new Promise<void>((resolve) => app.listen(0, "127.0.0.1", resolve));
  redirect = `http://127.0.0.1:${(app.address() as AddressInfo).port}/callback`;
});
afterAll(async () => {
  app?.closeAllConnections();
  await new Promise((resolve) => app?.close(resolve));
});

it("shows the app, its redirect host and the scopes; an unticked scope is left out of the token", async () => {
  const oauth = await loadOauth();
  const insecure = { [oauth.allowInsecureRequests]: true };
  const issuer = new URL(env.t.url);
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: "oauth2", ...insecure }));
  const client = (await oauth.processDynamicClientRegistrationResponse(
    await oauth.dynamicClientRegistrationRequest(as, { redirect_uris: [redirect], client_name: "Browser Agent", token_endpoint_auth_method: "none" }, insecure),
  )) as unknown as { client_id: string };
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint!);
  url.search = new URLSearchParams({
    client_id: client.client_id,
    redirect_uri: redirect,
    response_type: "code",
    scope: "items:read items:write tasks:read",
    state,
    resource: `${issuer.origin}/v1/ext/mcp`,
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
  }).toString();

  const page = await signIn(env.browser, env.t.url, env.user);
  await page.goto(url.href);
  await page.waitForURL(/\/console\/oauth\/interaction\//);
  await expect(page.getByRole("heading", { level: 1 }).innerText()).resolves.toBe("Connect Browser Agent to Stageline");
  await expect(page.locator("main").innerText()).resolves.toContain(new URL(redirect).host);
  for (const scope of ["items:read", "items:write", "tasks:read"]) await expect(page.getByLabel(scope).isChecked()).resolves.toBe(true);
  await expectNoSeriousAxeViolations(page);
  await page.getByLabel("items:write").uncheck();
  await clickAndLoad(page, page.getByRole("button", { name: "Allow" }));
  await page.waitForURL((u) => u.href.startsWith(redirect));
  const callback = new URL(page.url());
  expect(callback.searchParams.get("iss")).toBe(issuer.origin);

  const params = oauth.validateAuthResponse(as, client, callback, state);
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirect, verifier, insecure));
  expect(tokens.scope!.split(" ").sort()).toEqual(["items:read", "tasks:read"]);
});
