/**
 * The MCP conformance suite's authorization server scenarios (`conformance authorization`), run by
 * scripts/mcp-conformance.mjs against the built server's OAuth 2.1 authorization server (docs/oauth.md):
 *
 * - `authorization-server-metadata-endpoint`: RFC 8414 metadata at the issuer (and the CIMD flag);
 * - `authorization-code-grant`: the suite prints an authorization URL (code flow, PKCE S256, `resource` = the MCP
 *   endpoint, no `scope`, no `prompt`) and waits for the browser at its own callback `http://127.0.0.1:<port>/callback`;
 *   it then exchanges the code and checks the token response. The client is registered first by Dynamic Client
 *   Registration with that callback as its redirect URI; the person's part is played over HTTP: the demo user signs
 *   in on the console (CSRF token from the form), the consent form is sent as shown, and the redirect to the suite's
 *   callback is followed.
 *
 * Both run in one invocation of the suite (the code grant reads the metadata the first scenario fetched). The suite's
 * `authorization` command takes no expected-failures file: every check must pass (none is expected to fail).
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";

/** How long the person's part may take before the run is abandoned (the suite itself waits up to 5 minutes). */
const BROWSER_TIMEOUT_MS = 60_000;

/** A free loopback port (for the suite's callback server). */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Registers a public client (PKCE, code and refresh_token grants) for `redirectUri`; resolves with its client_id. */
async function registerClient(issuer, redirectUri) {
  const res = await fetch(`${issuer}/oauth/reg`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_name: "MCP conformance suite", redirect_uris: [redirectUri], token_endpoint_auth_method: "none", grant_types: ["authorization_code", "refresh_token"], response_types: ["code"] }),
  });
  const body = await res.json();
  if (res.status !== 201 || typeof body.client_id !== "string") throw new Error(`client registration answered ${res.status}: ${JSON.stringify(body)}`);
  return body.client_id;
}

/** A browser over fetch with a cookie jar (name=value; one origin), following redirects that stay on `origin`. */
function browser(origin) {
  const jar = new Map();
  const send = async (url, init = {}) => {
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
    const res = await fetch(url, { ...init, redirect: "manual", headers: { ...init.headers, cookie } });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const eq = pair.indexOf("=");
      const gone = /max-age=0|expires=Thu, 01 Jan 1970/i.test(line);
      if (gone) jar.delete(pair.slice(0, eq));
      else jar.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    return { status: res.status, url, location: res.headers.get("location"), text: await res.text() };
  };
  const follow = async (hop) => {
    for (let i = 0; i < 20 && hop.status >= 300 && hop.status < 400 && hop.location; i++) {
      const next = new URL(hop.location, hop.url);
      if (next.origin !== origin) return hop;
      hop = await send(next.href);
    }
    return hop;
  };
  const form = (html) => ({
    action: /<form method="post" action="([^"]+)"/.exec(html)?.[1]?.replace(/&#x2F;|&#47;/g, "/") ?? "",
    csrf: /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? "",
  });
  const post = async (url, params) =>
    follow(await send(new URL(url, origin).href, { method: "POST", body: new URLSearchParams(params), headers: { origin, "content-type": "application/x-www-form-urlencoded" } }));
  return { get: async (url) => follow(await send(url)), post, form };
}

/**
 * The person's part for `authorizationUrl`: sign in as `user`, allow on the consent page as shown, then open the
 * redirect (the suite's callback). @throws when a step does not land where it should.
 */
async function signInAndConsent(issuer, authorizationUrl, user) {
  const b = browser(issuer);
  const signIn = await b.get(`${issuer}/console/sign-in`);
  const signedIn = await b.post("/console/sign-in", { _csrf: b.form(signIn.text).csrf, email: user.email, password: user.password });
  if (signedIn.status !== 200) throw new Error(`console sign-in answered ${signedIn.status}`);
  const consent = await b.get(authorizationUrl);
  if (!/\/console\/oauth\/interaction\//.test(consent.url)) throw new Error(`the authorization request did not reach the consent page (${consent.status} ${consent.url})`);
  const { action, csrf } = b.form(consent.text);
  const params = new URLSearchParams({ _csrf: csrf, decision: "allow" });
  for (const m of consent.text.matchAll(/name="scopes" type="checkbox" value="([^"]+)" checked/g)) params.append("scopes", m[1]);
  const done = await b.post(action, params);
  if (done.status !== 303 || !done.location) throw new Error(`the consent form answered ${done.status}, not a redirect`);
  const callback = await fetch(done.location);
  await callback.text();
}

/** Reads the checks the suite wrote under `outDir`. */
function readChecks(outDir) {
  const checks = [];
  for (const file of fs.readdirSync(outDir, { recursive: true })) {
    if (String(file).endsWith("checks.json")) checks.push(...JSON.parse(fs.readFileSync(path.join(outDir, String(file)), "utf8")));
  }
  return checks;
}

/** Runs one authorization scenario; `onOutput` sees the suite's output as it comes. */
function runSuite(node, suite, args, outDir, onOutput = () => {}) {
  const child = spawn(node, [suite, "authorization", ...args, "-o", outDir], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } });
  let out = "";
  const take = (c) => {
    out += c;
    onOutput(out, child);
  };
  child.stdout.on("data", take);
  child.stderr.on("data", take);
  return new Promise((resolve) => child.once("exit", (code) => resolve({ code: code ?? 1, out, checks: readChecks(outDir) })));
}

/**
 * Runs the suite's authorization scenarios, in one run (the code grant reads the metadata scenario's result), against
 * `issuer` (the server's origin) for the MCP resource `resource`, the demo `user` playing the person.
 * @returns `{ code, out, checks }` (every check of both scenarios).
 */
export async function runAuthorizationScenarios({ node, suite, issuer, resource, user, work }) {
  const port = await freePort();
  const clientId = await registerClient(issuer, `http://127.0.0.1:${port}/callback`);
  const outDir = path.join(work, "authorization");
  fs.mkdirSync(outDir);
  let person;
  const args = ["--url", issuer, "--client-id", clientId, "--resource", resource, "--port", String(port)];
  const result = await runSuite(node, suite, args, outDir, (out, child) => {
    const url = new RegExp(`^(${issuer.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/oauth/auth\\?\\S+)$`, "m").exec(out)?.[1];
    if (!url || person) return;
    const timer = setTimeout(() => child.kill("SIGTERM"), BROWSER_TIMEOUT_MS);
    person = signInAndConsent(issuer, url, user)
      .catch((err) => {
        child.kill("SIGTERM");
        return err;
      })
      .finally(() => clearTimeout(timer));
  });
  const failed = await person;
  if (failed instanceof Error) result.out += `\nthe person's part failed: ${failed.message}`;
  if (!person) result.out += "\nthe suite printed no authorization URL";
  return result;
}
