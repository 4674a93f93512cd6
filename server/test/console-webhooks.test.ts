/**
 * The console's Webhooks pages in a real headless Chromium (helpers/console-browser.ts): an admin adds an endpoint
 * pointing at a local receiver, an item created through the API arrives signed (verified with the revealed secret)
 * and shows in the delivery log and its detail view; test event, resend, pause/resume, secret rotation, outcome
 * filter, the charts of deliveries per hour and their tables (issue 40 item 6), the replay form (its error state too; the replay itself over HTTP in console-webhooks-replay.test.ts); REST hooks made through the API are listed and deletable; a member sees but cannot change anything and
 * never a secret; another company's endpoint is 404; axe-core on every page. The Developers part's Events pages
 * (issue 40 item 4) follow the first delivery from its event (their HTTP tests: console-events.test.ts). Writes
 * docs/console-webhooks.png when UPDATE_SCREENSHOTS=1.
 */
import type { Browser, Page } from "playwright-core";
import { Webhook } from "standardwebhooks";
import { CLI_ACTOR } from "../src/services/audit-log";
import { EndpointInputSchema, createEndpoint } from "../src/services/webhook-endpoints";
import { BROWSER_SETUP_TIMEOUT_MS, BROWSER_TEST_TIMEOUT_MS, clickAndLoad, type ConsoleUser, createConsoleUser, expectNoSeriousAxeViolations, launchBrowser, signIn, submitForm, updateScreenshot } from "./helpers/console-browser";
import { startReceiver, type Receiver } from "./helpers/receiver";
import { startTestServer, type TestServer } from "./helpers/test-server";

jest.setTimeout(BROWSER_TEST_TIMEOUT_MS);

process.env.WEBHOOK_RETRY_BASE_MS = "20";

let t: TestServer;
let browser: Browser;
let rx: Receiver;
let admin: ConsoleUser;
let member: ConsoleUser;
let adminPage: Page;
/** The endpoint the admin adds in the first test (later tests use it). */
let endpointUrl = "";
let secret = "";

const requestsTo = (path: string) => rx.requests.filter((r) => r.path === path);

async function createItem(name: string) {
  const p = t.pipeline;
  const res = await t.request("POST", "/v1/ext/items", { name, pipeline_id: p.id, stage_id: p.stages[0]!.id, metadata: { email: `${name.replace(/\W/g, "")}@example.com` } });
  expect(res.status).toBe(201);
  return res.body as { item_id: string; name: string };
}

/** Reloads the page until `text` is visible (the dispatcher works in the background). */
async function reloadUntilVisible(page: Page, text: string | RegExp, what: string) {
  const deadline = Date.now() + 15_000;
  for (;;) {
    await page.goto(page.url());
    if (await page.getByText(text).first().isVisible()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} on ${page.url()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Reloads the page until the first delivery-log row named by `name` reads `pattern`, and returns that text. The
 * receiver sees a delivery before the dispatcher records its response, so the row's own text is what is waited on
 * (a word elsewhere on the page, such as a filter's label, says nothing about the row).
 */
async function reloadUntilRowMatches(page: Page, name: RegExp, pattern: RegExp, what: string): Promise<string> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    await page.goto(page.url());
    const row = page.getByRole("row", { name }).first();
    const text = (await row.count()) > 0 ? await row.innerText() : "";
    if (pattern.test(text)) return text;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} on ${page.url()}; the row read: ${text}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

beforeAll(async () => {
  t = await startTestServer();
  rx = await startReceiver();
  browser = await launchBrowser();
  admin = await createConsoleUser(t, "admin");
  member = await createConsoleUser(t, "member");
  adminPage = await signIn(browser, t.url, admin);
}, BROWSER_SETUP_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await rx?.close();
  await t?.close();
});

describe("webhook endpoints", () => {
  it("adds an endpoint, delivers a signed item.created to it and shows it in the delivery log", async () => {
    const page = adminPage;
    await page.goto("/console/webhooks");
    await expectNoSeriousAxeViolations(page);
    await clickAndLoad(page, page.getByRole("link", { name: "Add an endpoint" }));
    await expect(page.getByRole("heading", { level: 1 }).innerText()).resolves.toBe("Add a webhook endpoint");
    await expectNoSeriousAxeViolations(page);

    // Nothing filled in: both problems are listed and linked to their fields.
    const refused = await submitForm(page, page.getByRole("button", { name: "Add endpoint" }));
    expect(refused.status()).toBe(400);
    const summary = page.locator(".error-summary");
    await expect(summary.getByRole("link", { name: "Enter the endpoint URL." }).getAttribute("href")).resolves.toBe("#target_url");
    await expect(summary.getByRole("link", { name: "Choose at least one event." }).getAttribute("href")).resolves.toBe("#event-item.created");
    await expectNoSeriousAxeViolations(page);

    await page.getByLabel("Endpoint URL").fill(`${rx.url}/crm`);
    await page.getByLabel("Description (optional)").fill("CRM sync");
    await page.getByLabel("item.created").check();
    await page.getByLabel("task.completed").check();
    await clickAndLoad(page, page.getByRole("button", { name: "Add endpoint" }));
    await page.waitForURL(/\/console\/webhooks\/[0-9a-f-]{36}$/);
    endpointUrl = new URL(page.url()).pathname;
    await expect(page.getByRole("status").innerText()).resolves.toContain("added");
    await expect(page.getByText("item.created, task.completed").isVisible()).resolves.toBe(true);
    await expectNoSeriousAxeViolations(page);

    await clickAndLoad(page, page.getByRole("button", { name: "Reveal signing secret" }));
    secret = await page.getByLabel("Signing secret").inputValue();
    expect(secret).toMatch(/^whsec_/);
    await page.goto(endpointUrl); // shown once: gone on the next view
    await expect(page.getByLabel("Signing secret").count()).resolves.toBe(0);

    const item = await createItem("Console Deal");
    await rx.waitFor(() => requestsTo("/crm").length === 1, "the delivery");
    const received = requestsTo("/crm")[0]!;
    expect(new Webhook(secret).verify(received.body.toString("utf8"), received.headers)).toMatchObject({ item_id: item.item_id, name: "Console Deal" });

    await expect(reloadUntilRowMatches(page, /item\.created/, /Delivered\s+1\s+200\s+\d+ ms/, "the delivered entry")).resolves.toMatch(/Delivered/);
    await expectNoSeriousAxeViolations(page);
    await updateScreenshot(page, "console-webhooks.png");

    // Its charts (issue 40 item 6): pictures with a name, and the same numbers in a table behind a disclosure.
    await expect(page.getByRole("img", { name: "Deliveries per hour, last 24 hours: delivered, failed, pending" }).isVisible()).resolves.toBe(true);
    await expect(page.getByRole("img", { name: "Delivery latency per hour, last 24 hours, p50 and p95" }).isVisible()).resolves.toBe(true);
    await page.getByText("Table of the numbers").first().click(); // opens the <details>, no navigation
    const numbers = page.getByRole("table", { name: "Deliveries per hour, last 24 hours: delivered, failed, pending: the numbers of the chart" });
    await expect(numbers.getByRole("row").count()).resolves.toBe(25); // the heading row and 24 hours
    await expect(numbers.getByRole("row", { name: /UTC 1 0 0$/ }).count()).resolves.toBe(1); // the one delivery, delivered
    await expectNoSeriousAxeViolations(page);
    await clickAndLoad(page, page.getByRole("link", { name: "Last 7 days" }));
    await expect(page.getByRole("img", { name: "Deliveries per hour, last 7 days: delivered, failed, pending" }).isVisible()).resolves.toBe(true);
    await expectNoSeriousAxeViolations(page);
    await page.goto(endpointUrl);
    const row = page.getByRole("row", { name: /item\.created/ }).first();

    await clickAndLoad(page, row.getByRole("link", { name: /Details/ }));
    await expect(page.getByRole("heading", { level: 1 }).innerText()).resolves.toBe("Delivery of item.created");
    await expect(page.getByLabel("Request body").innerText()).resolves.toContain('"name": "Console Deal"');
    await expect(page.getByRole("row", { name: /webhook-signature/ }).innerText()).resolves.toContain(received.headers["webhook-signature"]!);
    await expectNoSeriousAxeViolations(page);
    await clickAndLoad(page, page.getByRole("button", { name: "Resend delivery" }));
    await expect(page.getByRole("status").innerText()).resolves.toContain("queued");
    await rx.waitFor(() => requestsTo("/crm").length === 2, "the resent delivery");
    expect(requestsTo("/crm")[1]!.headers["webhook-id"]).toBe(received.headers["webhook-id"]);
  });

  it("sends a signed test event built from the pipeline's fields", async () => {
    const page = adminPage;
    await page.goto(endpointUrl);
    await page.getByLabel("Event", { exact: true }).selectOption("task.completed");
    await clickAndLoad(page, page.getByRole("button", { name: "Send test event" }));
    await expect(page.getByRole("status").innerText()).resolves.toContain("Test event sent");
    await rx.waitFor(() => requestsTo("/crm").some((r) => r.headers["x-webhook-event"] === "task.completed"), "the test event");
    const test = requestsTo("/crm").find((r) => r.headers["x-webhook-event"] === "task.completed")!;
    expect(new Webhook(secret).verify(test.body.toString("utf8"), test.headers)).toMatchObject({ task_id: "sample_task", item_id: "sample_item", created_by: "sample_api_key" });
    await reloadUntilVisible(page, "task.completed", "the test event in the log");
  });

  it("pauses (nothing is sent), resumes, rotates the secret and records it all in the audit log", async () => {
    const page = adminPage;
    await page.goto(endpointUrl);
    await clickAndLoad(page, page.getByRole("button", { name: "Pause endpoint" }));
    await expect(page.getByText(/paused since/).isVisible()).resolves.toBe(true);
    await expectNoSeriousAxeViolations(page);
    const before = requestsTo("/crm").length;
    await createItem("While Paused");
    await new Promise((r) => setTimeout(r, 500));
    expect(requestsTo("/crm")).toHaveLength(before);
    await clickAndLoad(page, page.getByRole("button", { name: "Resume endpoint" }));
    await expect(page.getByText(/paused since/).count()).resolves.toBe(0);
    await createItem("After Resume");
    await rx.waitFor(() => requestsTo("/crm").length === before + 1, "the delivery after resume");

    await clickAndLoad(page, page.getByRole("button", { name: "Rotate signing secret" }));
    await expect(page.getByRole("status").innerText()).resolves.toContain("24 hours");
    await clickAndLoad(page, page.getByRole("button", { name: "Reveal signing secret" }));
    await expect(page.getByRole("status").innerText()).resolves.toContain("previous secret also signs");
    const rotated = await page.getByLabel("Signing secret").inputValue();
    expect(rotated).not.toBe(secret);
    await createItem("After Rotation");
    await rx.waitFor(() => requestsTo("/crm").length === before + 2, "the delivery after rotation");
    const last = requestsTo("/crm").at(-1)!;
    for (const s of [secret, rotated]) expect(() => new Webhook(s).verify(last.body.toString("utf8"), last.headers)).not.toThrow();

    await page.goto("/console/audit");
    const audit = await page.locator("main table").innerText();
    for (const phrase of ["Webhook endpoint created", "Webhook endpoint changed", "Webhook signing secret rotated"]) expect(audit).toContain(phrase);
  });

  it("filters the delivery log by outcome", async () => {
    const page = adminPage;
    await page.goto(endpointUrl);
    await page.getByLabel("Outcome").selectOption("failed");
    await clickAndLoad(page, page.getByRole("button", { name: "Show deliveries" }));
    expect(page.url()).toContain("outcome=failed");
    await expect(page.getByText("No deliveries with this outcome").isVisible()).resolves.toBe(true);
    await page.getByLabel("Outcome").selectOption("delivered");
    await clickAndLoad(page, page.getByRole("button", { name: "Show deliveries" }));
    const outcomes = await page.getByRole("table", { name: "Deliveries, newest first" }).locator("tbody tr td:nth-child(3)").allInnerTexts();
    expect(outcomes.length).toBeGreaterThan(0);
    expect(new Set(outcomes)).toEqual(new Set(["Delivered"]));
    await expectNoSeriousAxeViolations(page);
  });

  it("replays failed deliveries from the labelled Since field; an empty Since is shown again with its error", async () => {
    const page = adminPage;
    await page.goto(endpointUrl);
    const replay = page.getByRole("button", { name: "Replay failed deliveries" });
    expect((await submitForm(page, replay)).status()).toBe(400);
    await expect(page.getByRole("link", { name: "Enter the date and time to replay from (UTC)." }).isVisible()).resolves.toBe(true);
    await expectNoSeriousAxeViolations(page);
    await page.getByLabel("Since (UTC)").fill("2020-01-01T00:00");
    expect((await submitForm(page, page.getByRole("button", { name: "Replay failed deliveries" }))).status()).toBe(303);
    await expect(page.getByText("No failed deliveries in that time range").isVisible()).resolves.toBe(true);
  });

  it("edits an endpoint's events and description", async () => {
    const page = adminPage;
    await page.goto(`${endpointUrl}/edit`);
    await expectNoSeriousAxeViolations(page);
    await page.getByLabel("Description (optional)").fill("CRM sync v2");
    await page.getByLabel("item.updated").check();
    await clickAndLoad(page, page.getByRole("button", { name: "Save endpoint" }));
    await page.waitForURL((u) => u.pathname === endpointUrl);
    await expect(page.getByText("item.created, item.updated, task.completed").isVisible()).resolves.toBe(true);
    await expect(page.getByText("CRM sync v2").isVisible()).resolves.toBe(true);
  });
});

describe("Developers, Events (issue 40 item 4)", () => {
  it("follows an event from the Developers menu to its deliveries, resends one, and shows a member no Resend (axe-core on each page)", async () => {
    const page = adminPage;
    // The first test's item: its item.created went to the endpoint at /crm.
    const first = await t.server.ctx.prisma.webhookEvent.findFirstOrThrow({ where: { companyId: t.companyId, type: "item.created" }, orderBy: { seq: "asc" } });
    await page.goto("/console/webhooks");
    const developers = page.getByRole("navigation", { name: "Console" }).getByRole("list", { name: "Developers" });
    await clickAndLoad(page, developers.getByRole("link", { name: "Events" }));
    await expect(page.getByRole("heading", { level: 1 }).innerText()).resolves.toBe("Events");
    await expect(developers.getByRole("link", { name: "Events" }).getAttribute("aria-current")).resolves.toBe("page");
    await expectNoSeriousAxeViolations(page);

    await page.getByLabel("Event", { exact: true }).selectOption("item.created");
    await page.getByLabel("Item, task or note id (optional)").fill(first.resourceId);
    await page.getByLabel("From (UTC, optional)").fill("2020-01-01T00:00");
    await clickAndLoad(page, page.getByRole("button", { name: "Show events" }));
    const rows = page.getByRole("table", { name: "Events, newest first" }).getByRole("row");
    await expect(rows.count()).resolves.toBe(2); // the header and the one event
    await expect(rows.nth(1).innerText()).resolves.toMatch(new RegExp(`^item\\.created[^\t]*\t\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2} UTC\t${first.resourceId}\t1 delivered$`));
    await expectNoSeriousAxeViolations(page);

    // Before earlier than From: the (GET) form is shown again with its errors (400).
    await page.getByLabel("Before (UTC, optional)").fill("2019-01-01T00:00");
    const refused = page.waitForResponse((r) => r.request().resourceType() === "document" && new URL(r.url()).pathname === "/console/events");
    await clickAndLoad(page, page.getByRole("button", { name: "Show events" }));
    expect((await refused).status()).toBe(400);
    await expect(page.getByRole("link", { name: "Before must be later than From." }).isVisible()).resolves.toBe(true);
    await expectNoSeriousAxeViolations(page);
    await page.getByLabel("Before (UTC, optional)").fill("");
    await clickAndLoad(page, page.getByRole("button", { name: "Show events" }));

    await clickAndLoad(page, page.getByRole("link", { name: /^item\.created event of / }));
    await expect(page.getByRole("heading", { level: 1 }).innerText()).resolves.toBe("Event item.created");
    await expect(page.getByLabel("Body", { exact: true }).innerText()).resolves.toContain('"name": "Console Deal"');
    const delivery = page.getByRole("region", { name: new RegExp(`^To ${rx.url}/crm: Delivered$`) });
    await expect(delivery.getByRole("table", { name: /^Attempts to / }).getByRole("row").nth(1).innerText()).resolves.toMatch(/UTC\s+200\s+\d+ ms\s+None/);
    await expectNoSeriousAxeViolations(page);
    const sent = requestsTo("/crm").filter((r) => r.headers["webhook-id"] === first.id).length;
    await clickAndLoad(page, delivery.getByRole("button", { name: `Resend to ${rx.url}/crm` }));
    await expect(page.getByRole("status").innerText()).resolves.toContain("queued to be sent again");
    await rx.waitFor(() => requestsTo("/crm").filter((r) => r.headers["webhook-id"] === first.id).length === sent + 1, "the resent delivery");
    await expectNoSeriousAxeViolations(page);

    const memberPage = await signIn(browser, t.url, member);
    await memberPage.goto(`/console/events/${first.id}`);
    await expect(memberPage.getByRole("heading", { level: 1 }).innerText()).resolves.toBe("Event item.created");
    await expect(memberPage.getByRole("button", { name: /^Resend/ }).count()).resolves.toBe(0);
    await expectNoSeriousAxeViolations(memberPage);
    await memberPage.context().close();
  });
});

describe("REST hooks made through the API", () => {
  it("are listed as such and can be deleted after a confirmation", async () => {
    const hook = await t.request("POST", "/v1/ext/webhooks", { target_url: `${rx.url}/zap`, event: "item.created" });
    expect(hook.status).toBe(201);
    const page = adminPage;
    await page.goto("/console/webhooks");
    const row = page.getByRole("row", { name: new RegExp(`${rx.url}/zap`) });
    await expect(row.innerText()).resolves.toContain("REST hook (API)");
    await clickAndLoad(page, row.getByRole("link", { name: `${rx.url}/zap` }));
    await expect(page.getByRole("button", { name: "Reveal signing secret" }).count()).resolves.toBe(0);
    await expect(page.getByRole("button", { name: "Pause endpoint" }).count()).resolves.toBe(0);
    await expectNoSeriousAxeViolations(page);
    await clickAndLoad(page, page.getByRole("link", { name: "Delete REST hook" }));
    await expectNoSeriousAxeViolations(page);
    await clickAndLoad(page, page.getByRole("button", { name: "Delete webhook" }));
    await page.waitForURL(/\/console\/webhooks$/);
    await expect(page.getByRole("status").innerText()).resolves.toContain("deleted");
    expect((await t.request("GET", "/v1/ext/webhooks")).body).toEqual([]);
  });
});

describe("guards", () => {
  it("lets a member see endpoints and deliveries but no secret and no write (403)", async () => {
    const page = await signIn(browser, t.url, member);
    await page.goto(endpointUrl);
    await expect(page.getByRole("heading", { level: 2, name: "Delivery log" }).isVisible()).resolves.toBe(true);
    for (const name of ["Reveal signing secret", "Rotate signing secret", "Pause endpoint", "Send test event"]) {
      await expect(page.getByRole("button", { name }).count()).resolves.toBe(0);
    }
    await expectNoSeriousAxeViolations(page);
    const token = await page.locator('input[name="_csrf"]').first().inputValue();
    const statuses = await page.evaluate(
      async ({ csrf, base }) => {
        const out: Record<string, { status: number; body: string }> = {};
        for (const action of ["reveal-secret", "pause", "rotate-secret", "test", "delete"]) {
          const res = await fetch(`${base}/${action}`, { method: "POST", body: new URLSearchParams({ _csrf: csrf }) });
          out[action] = { status: res.status, body: await res.text() };
        }
        return out;
      },
      { csrf: token, base: endpointUrl },
    );
    for (const { status, body } of Object.values(statuses)) {
      expect(status).toBe(403);
      expect(body).not.toContain(secret);
      expect(body).not.toMatch(/whsec_/);
    }
    expect((await page.goto("/console/webhooks/new"))!.status()).toBe(403);
    await expect(page.getByRole("link", { name: "Add an endpoint" }).count()).resolves.toBe(0);
    await page.context().close();
  });

  it("answers 404 for another company's endpoint", async () => {
    const other = await t.newCompany("Other Hooks Co");
    const foreign = await createEndpoint(
      t.server.ctx,
      { companyId: other.companyId, actor: CLI_ACTOR },
      EndpointInputSchema.parse({ target_url: `${rx.url}/foreign`, events: ["item.created"] }),
    );
    const page = adminPage;
    for (const path of [`/console/webhooks/${foreign.id}`, `/console/webhooks/${foreign.id}/edit`]) {
      const res = await page.goto(path);
      expect(res!.status()).toBe(404);
    }
    await expectNoSeriousAxeViolations(page);
    const token = await page.locator('input[name="_csrf"]').first().inputValue();
    const status = await page.evaluate(
      async ({ csrf, id }) => (await fetch(`/console/webhooks/${id}/delete`, { method: "POST", body: new URLSearchParams({ _csrf: csrf }) })).status,
      { csrf: token, id: foreign.id },
    );
    expect(status).toBe(404);
    expect(await t.server.ctx.prisma.webhookSubscription.count({ where: { id: foreign.id } })).toBe(1);
  });
});
