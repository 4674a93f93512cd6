/**
 * The console's read-only Pipelines pages in a real headless Chromium: pipelines with stages, statuses, custom
 * fields and duplicate rule; a pipeline's items in pages, searched by short ID or name; an item with its custom
 * fields and tasks; importing a blueprint file (admin), a broken file refused on its field; a member sees but cannot
 * import (403); another company's pipeline is 404; archiving and restoring a pipeline; deleting an item; axe-core on every page.
 */
import type { Browser, Page } from "playwright-core";
import { BROWSER_SETUP_TIMEOUT_MS, BROWSER_TEST_TIMEOUT_MS, clickAndLoad, type ConsoleUser, createConsoleUser, expectNoSeriousAxeViolations, launchBrowser, signIn, submitForm } from "./helpers/console-browser";
import { createSalesPipeline, startTestServer, type TestServer } from "./helpers/test-server";

jest.setTimeout(BROWSER_TEST_TIMEOUT_MS);

let t: TestServer;
let browser: Browser;
let admin: ConsoleUser;
let page: Page;
const items: { item_id: string; short_id: string; name: string }[] = [];

beforeAll(async () => {
  t = await startTestServer();
  browser = await launchBrowser();
  admin = await createConsoleUser(t, "admin");
  page = await signIn(browser, t.url, admin);
  const p = t.pipeline;
  for (let i = 1; i <= 53; i++) {
    const res = await t.request("POST", "/v1/ext/items", {
      name: i === 5 ? "Initech renewal" : `Lead ${i}`,
      pipeline_id: p.id,
      stage_id: p.stages[0]!.id,
      metadata: { email: `lead${i}@example.com`, deal_value: i * 100 },
    });
    expect(res.status).toBe(201);
    items.push(res.body);
  }
}, BROWSER_SETUP_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

it("shows a pipeline with its stages, statuses, custom fields and duplicate rule", async () => {
  await page.goto("/console/pipelines");
  await expectNoSeriousAxeViolations(page);
  await clickAndLoad(page, page.getByRole("link", { name: "Sales", exact: true }));
  await expect(page.getByRole("heading", { level: 1 }).innerText()).resolves.toBe("Pipeline Sales");
  await expect(page.getByRole("row", { name: /Qualified/ }).innerText()).resolves.toContain("Open, Won, Lost");
  await expect(page.getByRole("row", { name: /Deal value/ }).innerText()).resolves.toMatch(/deal_value\s+number\s+No/);
  await expect(page.getByText("any of these fields match an existing item: email").isVisible()).resolves.toBe(true);
  await expectNoSeriousAxeViolations(page);
});

it("lists items newest first in pages, finds one by short ID or name, and shows it with fields and tasks", async () => {
  const target = items[4]!;
  await t.request("POST", "/v1/ext/tasks", { title: "Send proposal", due_at: "2027-02-01T10:00:00Z", assigned_to: "rep-1", item_id: target.item_id });
  await page.goto(`/console/pipelines/${t.pipeline.id}/items`);
  await expectNoSeriousAxeViolations(page);
  const rows = page.locator("main table tbody tr");
  await expect(rows.count()).resolves.toBe(50);
  await expect(rows.first().innerText()).resolves.toContain(items.at(-1)!.short_id);
  await clickAndLoad(page, page.getByRole("link", { name: "Older items" }));
  await expect(rows.count()).resolves.toBe(3);

  await page.getByLabel("Search by name or short ID").fill(target.short_id.toLowerCase());
  await clickAndLoad(page, page.getByRole("button", { name: "Search items" }));
  await expect(rows.allInnerTexts()).resolves.toEqual([expect.stringContaining("Initech renewal")]);
  await page.getByLabel("Search by name or short ID").fill("initech");
  await clickAndLoad(page, page.getByRole("button", { name: "Search items" }));
  await expect(rows.count()).resolves.toBe(1);
  await expectNoSeriousAxeViolations(page);

  await clickAndLoad(page, page.getByRole("link", { name: target.short_id }));
  await expect(page.getByRole("heading", { level: 1 }).innerText()).resolves.toBe(`${target.short_id}: Initech renewal`);
  await expect(page.getByRole("row", { name: /Email/ }).innerText()).resolves.toContain("lead5@example.com");
  await expect(page.getByRole("row", { name: /Deal value/ }).innerText()).resolves.toContain("500");
  await expect(page.getByRole("row", { name: /Send proposal/ }).innerText()).resolves.toContain("rep-1");
  await expectNoSeriousAxeViolations(page);
});

it("imports a pipeline from a blueprint file, and refuses a broken file on its field", async () => {
  await page.goto("/console/pipelines");
  await page.getByLabel("Blueprint file (JSON)").setInputFiles({ name: "broken.json", mimeType: "application/json", buffer: Buffer.from("{ not json") });
  const refused = await submitForm(page, page.getByRole("button", { name: "Import pipeline" }));
  expect(refused.status()).toBe(400);
  await expect(page.locator(".error-summary").getByRole("link", { name: /broken\.json is not valid JSON/ }).getAttribute("href")).resolves.toBe("#file");
  await expectNoSeriousAxeViolations(page);

  const blueprint = {
    name: "Renewals",
    stages: [{ name: "Due" }, { name: "Renewed", statuses: ["Done"] }],
    custom_fields: [{ key: "plan", label: "Plan", type: "select", options: ["Basic", "Pro"], required: true }],
  };
  await page.getByLabel("Blueprint file (JSON)").setInputFiles({ name: "renewals.json", mimeType: "application/json", buffer: Buffer.from(JSON.stringify(blueprint)) });
  await clickAndLoad(page, page.getByRole("button", { name: "Import pipeline" }));
  await page.waitForURL(/\/console\/pipelines\/[0-9a-f-]{36}$/);
  await expect(page.getByRole("status").innerText()).resolves.toContain('Pipeline "Renewals" imported with 2 stages');
  await expect(page.getByRole("row", { name: /Plan/ }).innerText()).resolves.toMatch(/select\s+Yes\s+Basic, Pro/);
  const api = await t.request("GET", "/v1/ext/pipelines");
  expect(api.body.map((p: { name: string }) => p.name)).toContain("Renewals");
});

it("lets a member read pipelines but not import (403), and answers 404 for another company's pipeline", async () => {
  const member = await createConsoleUser(t, "member");
  const memberPage = await signIn(browser, t.url, member);
  await memberPage.goto("/console/pipelines");
  await expect(memberPage.getByRole("button", { name: "Import pipeline" }).count()).resolves.toBe(0);
  const token = await memberPage.locator('input[name="_csrf"]').first().inputValue();
  const status = await memberPage.evaluate(async (csrf) => {
    const form = new FormData();
    form.set("_csrf", csrf);
    form.set("file", new Blob([JSON.stringify({ name: "Sneaky", stages: [{ name: "A" }] })], { type: "application/json" }), "sneaky.json");
    return (await fetch("/console/pipelines/import", { method: "POST", body: form })).status;
  }, token);
  expect(status).toBe(403);
  expect((await t.request("GET", "/v1/ext/pipelines")).body.map((p: { name: string }) => p.name)).not.toContain("Sneaky");
  await memberPage.context().close();

  const other = await t.newCompany("Other Pipelines Inc");
  for (const path of [`/console/pipelines/${other.pipeline.id}`, `/console/pipelines/${other.pipeline.id}/items`, `/console/pipelines/${t.pipeline.id}/items/${items[0]!.item_id}x`]) {
    expect((await page.goto(path))!.status()).toBe(404);
  }
  await expectNoSeriousAxeViolations(page);
});

it("archives a pipeline after a confirmation page and restores it (issue 19), each page accessible", async () => {
  const other = await createSalesPipeline(t.server, t.companyId, "Retired");
  await page.goto(`/console/pipelines/${other.id}`);
  await clickAndLoad(page, page.getByRole("link", { name: "Archive pipeline" }));
  await expect(page.getByRole("heading", { level: 1 }).innerText()).resolves.toBe('Archive pipeline "Retired"?');
  await expectNoSeriousAxeViolations(page);
  await clickAndLoad(page, page.getByRole("button", { name: "Archive pipeline" }));
  await expect(page.getByText('Pipeline "Retired" archived.').isVisible()).resolves.toBe(true);
  await expectNoSeriousAxeViolations(page);
  expect((await t.request("GET", "/v1/ext/pipelines")).body.map((p: { name: string }) => p.name)).not.toContain("Retired");
  await page.goto("/console/pipelines");
  await expect(page.getByRole("row", { name: /Retired/ }).innerText()).resolves.toContain("Archived");
  await page.goto(`/console/pipelines/${other.id}`);
  await clickAndLoad(page, page.getByRole("link", { name: "Restore pipeline" }));
  await clickAndLoad(page, page.getByRole("button", { name: "Restore pipeline" }));
  await page.getByText('Pipeline "Retired" restored.').waitFor();
  expect((await t.request("GET", "/v1/ext/pipelines")).body.map((p: { name: string }) => p.name)).toContain("Retired");
});

it("deletes an item from its page after an accessible confirmation page (issue 25), back on the items list with a notice", async () => {
  const target = items[10]!;
  await page.goto(`/console/pipelines/${t.pipeline.id}/items/${target.item_id}`);
  await clickAndLoad(page, page.getByRole("link", { name: `Delete item ${target.short_id}` }));
  await expect(page.getByRole("heading", { level: 1 }).innerText()).resolves.toBe(`Delete item ${target.short_id}?`);
  await expectNoSeriousAxeViolations(page);
  await clickAndLoad(page, page.getByRole("button", { name: `Delete item ${target.short_id}` }));
  await page.getByText(`Item ${target.short_id} deleted.`).waitFor();
  await expectNoSeriousAxeViolations(page);
  expect(new URL(page.url()).pathname).toBe(`/console/pipelines/${t.pipeline.id}/items`);
  expect((await t.request("GET", `/v1/ext/items/${target.item_id}`)).status).toBe(404);
});
