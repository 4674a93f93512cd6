/**
 * Notes on the item page in a real headless Chromium (issue 30 item 5): an admin adds a note (Markdown rendered, a
 * script payload shown as text), pins it, edits it, and deletes it after the confirmation page; axe-core on each page. Driven by
 * label and role only. The access rules, conflicts and payload lists are tested over HTTP in console-notes.test.ts.
 */
import type { Browser, Page } from "playwright-core";
import { BROWSER_SETUP_TIMEOUT_MS, BROWSER_TEST_TIMEOUT_MS, clickAndLoad, createConsoleUser, createItemOverApi, expectNoSeriousAxeViolations, launchBrowser, signIn, submitForm } from "./helpers/console-browser";
import { startTestServer, type TestServer } from "./helpers/test-server";

jest.setTimeout(BROWSER_TEST_TIMEOUT_MS);

let t: TestServer;
let browser: Browser;
let page: Page;
let itemUrl: string;

beforeAll(async () => {
  t = await startTestServer();
  browser = await launchBrowser();
  page = await signIn(browser, t.url, await createConsoleUser(t, "admin"));
  const item = await createItemOverApi(t, "Browser notes deal");
  itemUrl = `/console/pipelines/${t.pipeline.id}/items/${item.item_id}`;
  expect((await t.request("POST", "/v1/ext/notes", { item_id: item.item_id, body: "An older note from Zapier" })).status).toBe(201);
}, BROWSER_SETUP_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

it("adds a note, pins it above the older one, edits it, and deletes it after confirming", async () => {
  const dialogs: string[] = [];
  page.on("dialog", (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  await page.goto(itemUrl);
  await expectNoSeriousAxeViolations(page);

  await page.getByLabel("Add a note").fill("**Call Ada** on Monday\n\n<img src=x onerror=alert(1)> [docs](https://docs.example/x)");
  const added = await submitForm(page, page.getByRole("button", { name: "Add note" }));
  expect(added.status()).toBe(303);
  await expect(page.getByRole("status").innerText()).resolves.toContain("Note added.");
  const mine = page.getByRole("article", { name: /^Note by admin-/ });
  await expect(mine.getByText("Call Ada", { exact: true }).evaluate((el) => el.tagName)).resolves.toBe("STRONG");
  await expect(mine.getByText("<img src=x onerror=alert(1)>", { exact: false }).count()).resolves.toBe(1);
  await expect(mine.getByRole("link", { name: "docs" }).getAttribute("rel")).resolves.toBe("noopener noreferrer nofollow");
  await expect(page.locator("main img").count()).resolves.toBe(0);
  await expectNoSeriousAxeViolations(page);

  await submitForm(page, mine.getByRole("button", { name: /^Pin note by admin-/ }));
  const pinned = page.getByRole("article", { name: /^Pinned note by admin-/ });
  await expect(pinned.innerText()).resolves.toContain("Call Ada");
  const articles = await page.getByRole("article").allInnerTexts();
  expect(articles.map((text) => (text.includes("Call Ada") ? "mine" : text.includes("from Zapier") ? "older" : "?"))).toEqual(["mine", "older"]);
  await expectNoSeriousAxeViolations(page);

  await clickAndLoad(page, pinned.getByRole("link", { name: /^Edit note by admin-/ }));
  await expect(page.getByRole("heading", { level: 1 }).innerText()).resolves.toMatch(/^Edit note on /);
  const text = page.getByLabel("Note", { exact: true });
  await expect(text.inputValue()).resolves.toContain("**Call Ada** on Monday");
  await expectNoSeriousAxeViolations(page);
  await text.fill("**Call Ada** on Tuesday");
  await submitForm(page, page.getByRole("button", { name: "Save note" }));
  await expect(page.getByRole("status").innerText()).resolves.toContain("Note saved.");
  await expect(pinned.innerText()).resolves.toContain("Call Ada on Tuesday");

  await clickAndLoad(page, pinned.getByRole("link", { name: /^Delete note by admin-/ }));
  await expect(page.getByRole("heading", { level: 1 }).innerText()).resolves.toMatch(/^Delete this note on .+\?$/);
  await expectNoSeriousAxeViolations(page);
  const deleted = await submitForm(page, page.getByRole("button", { name: "Delete note" }));
  expect(deleted.status()).toBe(303);
  await expect(page.getByRole("status").innerText()).resolves.toMatch(/^Note deleted from /);
  await expect(page.getByRole("article").allInnerTexts()).resolves.toEqual([expect.stringContaining("An older note from Zapier")]);
  expect(dialogs).toEqual([]);
});

it("shows the item's Activity: labelled for screen readers, newest first, who did what, erased events said so", async () => {
  // Runs after the walk-through above: a note from the API, then the admin's note added, pinned, edited and deleted.
  await page.goto(itemUrl);
  const activity = page.getByRole("region", { name: "Activity" });
  const list = activity.getByRole("list", { name: "Activity of this item, newest first" });
  const entries = await list.getByRole("listitem").allInnerTexts();
  const lines = entries.map((text) => text.split("\n")[0]!.replace(/\d{4}-\d\d-\d\d \d\d:\d\d UTC/, "TIME"));
  expect(lines).toEqual([
    expect.stringMatching(/^Note deleted by admin-.+, TIME$/),
    expect.stringMatching(/^Note changed by admin-.+, TIME$/),
    expect.stringMatching(/^Note changed by admin-.+, TIME$/),
    expect.stringMatching(/^Note added by admin-.+, TIME$/),
    'Note added by API key "Test key", TIME',
    expect.stringMatching(/^Item created in stage ".+", status ".+" by API key "Test key", TIME$/),
  ]);
  // The deleted note's events keep no text; the API's note shows its own, in a table named for screen readers.
  expect(entries.slice(0, 4).every((text) => text.includes("Erased"))).toBe(true);
  expect(entries.join("\n")).not.toContain("Call Ada");
  const added = list.getByRole("table", { name: /^Note added, .+ UTC: previous and new values$/ });
  await expect(added.getByRole("row", { name: /Text Not set An older note from Zapier/ }).count()).resolves.toBe(1);
  await expect(page.getByRole("term").filter({ hasText: "Created" }).locator("xpath=following-sibling::dd[1]").innerText()).resolves.toMatch(
    /^\d{4}-\d\d-\d\d \d\d:\d\d UTC$/,
  );
  await expectNoSeriousAxeViolations(page);
});
