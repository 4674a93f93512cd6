/**
 * Real-browser tests of the console (../shared/BROWSER.md): a headless Chromium from @sparticuz/chromium driven by
 * playwright-core, axe-core for accessibility, and helpers to make users and sign in. One browser per test file
 * (`launchBrowser` in beforeAll, `browser.close()` in afterAll), a new context (cookie jar) per user.
 *
 * ```ts
 * const t = await startTestServer();            // helpers/test-server.ts (PGlite, or TEST_DATABASE_URL)
 * const browser = await launchBrowser();
 * const owner = await createConsoleUser(t, "owner");
 * const page = await signIn(browser, t.url, owner);
 * await page.goto(`${t.url}/console/keys`);
 * await expectNoSeriousAxeViolations(page);
 * ```
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import type { Browser, BrowserContext, Locator, Page, Response } from "playwright-core";
import { CLI_ACTOR } from "../../src/services/audit-log";
import { createUser, type Role } from "../../src/services/users";
import type { TestPipeline, TestServer } from "./test-server";

const REPO_ROOT = path.resolve(__dirname, "../../..");

/**
 * Launches headless Chromium. The first launch on a machine unpacks it to /tmp/chromium (1-2 s); test files running
 * in parallel may race on that, so a failed launch is retried once after a short wait.
 */
export async function launchBrowser(): Promise<Browser> {
  // Loaded here, not at the top: most files importing this module only sign in over HTTP, and playwright-core's
  // modules cost about 0.2 s of CPU to load into each test file's module registry (docs/testing.md "Third round").
  const { chromium: playwright } = await import("playwright-core");
  const launch = async () => {
    const chromium = await chromiumBinary();
    // `--single-process` (a serverless setting of the package) makes Chromium exit when a context closes.
    const args = chromium.args.filter((arg) => arg !== "--single-process");
    return playwright.launch({ executablePath: chromium.executablePath, args, headless: true });
  };
  try {
    return await launch();
  } catch {
    await new Promise((resolve) => setTimeout(resolve, 3000));
    return launch();
  }
}

let binary: Promise<{ executablePath: string; args: string[] }> | undefined;

/**
 * Where @sparticuz/chromium unpacked Chromium, and its launch arguments. The package is an ES module, which jest's
 * CommonJS runtime cannot load, so a short child Node process asks it.
 */
function chromiumBinary(): Promise<{ executablePath: string; args: string[] }> {
  binary ??= new Promise((resolve, reject) => {
    const script =
      'import("@sparticuz/chromium").then(async ({ default: c }) => process.stdout.write(JSON.stringify({ executablePath: await c.executablePath(), args: c.args })))';
    execFile(process.execPath, ["-e", script], { cwd: REPO_ROOT, timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`@sparticuz/chromium failed: ${err.message}\n${stderr}`));
      resolve(JSON.parse(stdout) as { executablePath: string; args: string[] });
    });
  });
  binary.catch(() => (binary = undefined));
  return binary;
}

/** A console user made for a test, with its password. */
export interface ConsoleUser {
  id: string;
  email: string;
  password: string;
  role: Role;
  companyId: string;
}

let userSeq = 0;

/** Creates a console user of `role` in the test server's main company (or `companyId`), as the admin CLI does. */
export async function createConsoleUser(t: TestServer, role: Role, companyId: string = t.companyId): Promise<ConsoleUser> {
  const email = `${role}-${++userSeq}@acme.example`;
  const created = await createUser(t.server.ctx.prisma, { company_id: companyId, email, role }, { actor: CLI_ACTOR });
  return { id: created.id, email: created.email, password: created.password, role, companyId };
}

/** A page in a new browser context (its own cookies) with `user` signed in; it is on the console's first page. */
export async function signIn(browser: Browser, baseUrl: string, user: { email: string; password: string }): Promise<Page> {
  const context: BrowserContext = await browser.newContext({ baseURL: baseUrl });
  const page = await context.newPage();
  await page.goto("/console/sign-in");
  await page.getByLabel("Email address").fill(user.email);
  await page.getByLabel("Password").fill(user.password);
  await Promise.all([page.waitForURL(/\/console\/(?!sign-in)/), page.getByRole("button", { name: "Sign in" }).click()]);
  return page;
}

let axeSource: string | undefined;

/** One axe-core violation as reported. */
export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; html: string }[];
}

/**
 * Runs axe-core (WCAG 2.x A/AA rules and best practices) on the current page and returns the serious and critical
 * violations. axe is injected with `page.evaluate` (the console's CSP refuses `addScriptTag` content).
 */
export async function seriousAxeViolations(page: Page): Promise<AxeViolation[]> {
  axeSource ??= fs.readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
  // The page a test navigated to must have loaded (callers wait for their navigations: `clickAndLoad`, `submitForm`,
  // `page.goto`, `page.waitForURL`); this guards the document itself, never an old page.
  await page.waitForLoadState("load");
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (ctx: unknown, opts: unknown) => Promise<{ violations: AxeViolation[] }> } }).axe;
    const result = await axe.run((globalThis as unknown as { document: unknown }).document, { resultTypes: ["violations"] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target, html: n.html })),
    }));
  });
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical");
}

/** Fails the test when axe-core finds a serious or critical violation on the current page (listing them). */
export async function expectNoSeriousAxeViolations(page: Page): Promise<void> {
  const violations = await seriousAxeViolations(page);
  if (violations.length) {
    const lines = violations.map((v) => `${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
    throw new Error(`axe-core found ${violations.length} serious/critical violation(s) on ${page.url()}:\n${lines.join("\n")}`);
  }
}

/**
 * Saves a screenshot of the page as `docs/<name>` in the repository, only when UPDATE_SCREENSHOTS=1 (so that test
 * runs, CI included, do not change the work tree). @returns the path written, or null.
 */
export async function updateScreenshot(page: Page, name: string): Promise<string | null> {
  if (process.env.UPDATE_SCREENSHOTS !== "1") return null;
  const file = path.join(REPO_ROOT, "docs", name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** The value of the form's CSRF token on the current page (for requests a test forges on purpose). */
export function csrfTokenOf(page: Page): Promise<string> {
  return page.locator('input[name="_csrf"]').first().inputValue();
}

/**
 * Waits until the page's main frame commits its next navigation, then until that new document has loaded. Start it
 * BEFORE the action that navigates (`Promise.all`): started after, it could miss the commit, and a bare
 * `waitForLoadState` resolves at once on the old page (already loaded) while the new one is still on its way, so a
 * locator or axe-core would then read the old page, or a document torn down mid-evaluation.
 */
async function nextPageLoaded(page: Page): Promise<void> {
  await page.waitForEvent("framenavigated", { predicate: (frame) => frame === page.mainFrame() });
  await page.waitForLoadState("load");
}

/**
 * Clicks `target` (a link, or a button that submits a form) and waits until the page it leads to has loaded (after a
 * redirect, the next page), so what the test does next sees that page. For clicks that do not navigate (a script's
 * button) use `target.click()`.
 * @throws playwright's TimeoutError when the click does not navigate.
 */
export async function clickAndLoad(page: Page, target: Locator): Promise<void> {
  await Promise.all([nextPageLoaded(page), target.click()]);
}

/**
 * Clicks a form's submit button and waits until the page the form led to has loaded (after a redirect, the next
 * page). @returns the HTTP response of the form's POST (its status: 303 on success, 400 with errors, 403, 404).
 */
export async function submitForm(page: Page, button: Locator): Promise<Response> {
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === "POST" && r.request().resourceType() === "document"),
    nextPageLoaded(page),
    button.click(),
  ]);
  return response;
}

/**
 * Signs in with plain HTTP (no browser), as a form post with the sign-in page's CSRF token and cookie.
 * @returns the POST's status (303 signed in, 401 wrong email or password, 429 rate-limited) and, when signed in,
 * the `cookie` header value that carries the session.
 */
export async function signInOverHttp(baseUrl: string, email: string, password: string, headers: Record<string, string> = {}): Promise<{ status: number; cookie: string | null }> {
  const page = await fetch(`${baseUrl}/console/sign-in`, { headers });
  const csrfCookie = page.headers.getSetCookie().map((c) => c.split(";")[0]!).join("; ");
  const token = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1] ?? "";
  const res = await fetch(`${baseUrl}/console/sign-in`, {
    method: "POST",
    headers: { cookie: csrfCookie, origin: baseUrl, "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams({ _csrf: token, email, password }),
    redirect: "manual",
  });
  const session = res.headers.getSetCookie().find((c) => /^(__Host-)?stageline\.session=/.test(c));
  return { status: res.status, cookie: session ? session.split(";")[0]! : null };
}

/**
 * Opens the invitation link of `token` and accepts it with `password` (typed twice), as a browser would, over plain
 * HTTP; `cookie` is a session this browser already has (sent with both requests), if any.
 * @returns the POST's status (303 joined, 400 refused, 404 link not valid), its HTML, the session cookie it set
 * (`stageline.session=...`, or null), and the CSRF cookie and token the form carried.
 */
export async function acceptInviteOverHttp(
  baseUrl: string,
  token: string,
  password: string,
  cookie?: string,
): Promise<{ status: number; text: string; sessionCookie: string | null; csrfCookie: string; csrfToken: string }> {
  const page = await fetch(`${baseUrl}/console/invite/${token}`, { headers: cookie ? { cookie } : {} });
  const csrfCookie = page.headers.getSetCookie().map((c) => c.split(";")[0]!).join("; ");
  const csrfToken = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1] ?? "";
  const res = await fetch(`${baseUrl}/console/invite/${token}`, {
    method: "POST",
    headers: { cookie: [cookie, csrfCookie].filter(Boolean).join("; "), origin: baseUrl, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ _csrf: csrfToken, password, password_confirmation: password }),
    redirect: "manual",
  });
  const session = res.headers.getSetCookie().find((c) => /^(__Host-)?stageline\.session=/.test(c));
  return { status: res.status, text: await res.text(), sessionCookie: session ? session.split(";")[0]! : null, csrfCookie, csrfToken };
}

/**
 * Deadline (ms) of a browser test file's beforeAll: a test server, Chromium and a signed-in page. About 5 s on an
 * idle machine, but over 60 s was seen with a dozen other test processes on two cores (the whole file then fails
 * without having tested anything): the deadline is for a stuck setup, not a measure of speed.
 */
export const BROWSER_SETUP_TIMEOUT_MS = 180_000;

/**
 * Deadline (ms) of one browser test (`jest.setTimeout` in each browser test file): a test walks through several pages
 * with axe-core on each. The longest (console-webhooks' first) takes about 10 s on an idle machine and 21-29 s with a
 * dozen test processes on two cores, too close to jest's 30 s; a test that times out also leaves its page busy for
 * the next test of the file. Like BROWSER_SETUP_TIMEOUT_MS, it catches a stuck test and measures nothing.
 */
export const BROWSER_TEST_TIMEOUT_MS = 120_000;

/** What `useConsoleTestServer` gives a test file once its beforeAll has run. */
export interface ConsoleTestEnv {
  t: TestServer;
  browser: Browser;
  /** A console user of the role asked for, in `t`'s main company. */
  user: ConsoleUser;
}

/**
 * Registers beforeAll/afterAll for a console test file: a test server (helpers/test-server.ts), one browser and a
 * console user of `role`. Read the fields inside tests (they are set by beforeAll).
 */
export function useConsoleTestServer(role: Role, start: () => Promise<TestServer>): ConsoleTestEnv {
  const env = {} as ConsoleTestEnv;
  beforeAll(async () => {
    env.t = await start();
    env.browser = await launchBrowser();
    env.user = await createConsoleUser(env.t, role);
  }, BROWSER_SETUP_TIMEOUT_MS);
  afterAll(async () => {
    await env.browser?.close();
    await env.t?.close();
  });
  return env;
}

/** A console session driven over plain HTTP (no browser): pages fetched and forms posted with the CSRF token. */
export interface ConsoleHttp {
  /** GET a console path with the session cookie; the page's `_csrf` token is kept for the next POST. */
  get(path: string): Promise<{ status: number; text: string }>;
  /**
   * POSTs a form (`URLSearchParams`, or `FormData` for multipart) to a console path with the session cookie, the
   * CSRF cookie and token of the last page fetched (from `tokenFrom` first) and a same-origin `Origin`.
   */
  post(path: string, form: URLSearchParams | FormData, tokenFrom?: string): Promise<{ status: number; text: string; location: string | null }>;
}

/** Signs `user` in over HTTP and returns a {@link ConsoleHttp} for that session. */
export async function consoleOverHttp(baseUrl: string, user: { email: string; password: string }): Promise<ConsoleHttp> {
  const session = await signInOverHttp(baseUrl, user.email, user.password);
  if (!session.cookie) throw new Error(`sign-in as ${user.email} failed (${session.status})`);
  let csrfCookie = "";
  let token = "";
  const get = async (path: string) => {
    const res = await fetch(baseUrl + path, { headers: { cookie: [session.cookie, csrfCookie].filter(Boolean).join("; ") }, redirect: "manual" });
    const set = res.headers.getSetCookie().map((c) => c.split(";")[0]!).find((c) => c.startsWith("stageline.csrf="));
    if (set) csrfCookie = set;
    const text = await res.text();
    token = /name="_csrf" value="([^"]+)"/.exec(text)?.[1] ?? token;
    return { status: res.status, text };
  };
  return {
    get,
    post: async (path, form, tokenFrom) => {
      if (tokenFrom) await get(tokenFrom);
      form.set("_csrf", token);
      const res = await fetch(baseUrl + path, {
        method: "POST",
        headers: { cookie: [session.cookie, csrfCookie].filter(Boolean).join("; "), origin: baseUrl },
        body: form,
        redirect: "manual",
      });
      return { status: res.status, text: await res.text(), location: res.headers.get("location") };
    },
  };
}

/**
 * Creates an item named `name` through the API (in `t`'s Sales pipeline, first stage, an email made from the name)
 * for a console test, with `key` of the company owning `pipeline`. @returns its `item_id` and `short_id`.
 */
export async function createItemOverApi(t: TestServer, name: string, key: string = t.apiKey, pipeline: TestPipeline = t.pipeline): Promise<{ item_id: string; short_id: string }> {
  const res = await t.request(
    "POST",
    "/v1/ext/items",
    { name, pipeline_id: pipeline.id, stage_id: pipeline.stages[0]!.id, metadata: { email: `${name.replace(/\W/g, "")}@example.com` } },
    key,
  );
  if (res.status !== 201) throw new Error(`item create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { item_id: string; short_id: string };
}

/** An admin and a member of `t`'s main company, each signed in over HTTP (the access tests of a console page). */
export async function adminAndMemberOverHttp(t: TestServer): Promise<{ adminUser: ConsoleUser; admin: ConsoleHttp; member: ConsoleHttp }> {
  const adminUser = await createConsoleUser(t, "admin");
  const admin = await consoleOverHttp(t.url, adminUser);
  const member = await consoleOverHttp(t.url, await createConsoleUser(t, "member"));
  return { adminUser, admin, member };
}
