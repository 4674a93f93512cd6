/**
 * Editor screenshots for n8n/README.md, taken during the opt-in run (`--screenshots`) with a real headless Chromium
 * (playwright-core + @sparticuz/chromium, BROWSER.md): the owner signs in, then the Create Item node's
 * parameter panel (pipeline, stage and status dropdowns filled by the package's loadOptions) and the trigger's panel
 * are saved as JPEG files under n8n/docs/.
 */
import fs from "node:fs";
import path from "node:path";
import type { Page } from "playwright-core";
import { CREATE_NODE_ID, CREATE_WORKFLOW_ID, TRIGGER_NODE_ID, TRIGGER_WORKFLOW_ID, type PipelineChoice } from "./fixtures";
import { OWNER } from "./n8n-rest";

const DOCS = path.resolve(__dirname, "..", "..", "..", "n8n", "docs");

/**
 * Opens a node's parameter panel: the editor's own route `/workflow/<id>/<node id>` opens it; when it does not,
 * a double-click on the node on the canvas, as a user does.
 */
async function openNode(page: Page, baseUrl: string, workflowId: string, nodeId: string, nodeName: string): Promise<void> {
  await page.goto(`${baseUrl}/workflow/${workflowId}/${nodeId}`);
  const panel = page.getByText("Parameters", { exact: true }).filter({ visible: true }).first(); // the panel's first tab
  try {
    await panel.waitFor({ timeout: 20_000 });
  } catch {
    await page.locator('[data-test-id="canvas-node"]').filter({ hasText: nodeName }).first().dblclick({ force: true });
    await panel.waitFor({ timeout: 15_000 });
  }
}

/**
 * Saves the page as docs/<name>.jpg: JPEG, because `n8n-node build` copies every .png and .svg of the package folder
 * into dist/, and screenshots have no place in the published tarball.
 * @returns the path relative to n8n/.
 */
async function save(page: Page, name: string): Promise<string> {
  fs.mkdirSync(DOCS, { recursive: true });
  const file = path.join(DOCS, `${name}.jpg`);
  await page.screenshot({ path: file, type: "jpeg", quality: 85 });
  return path.relative(path.resolve(DOCS, ".."), file);
}

/**
 * Signs in and saves `docs/n8n-create-item.jpg` and `docs/n8n-trigger.jpg`.
 * @param debugDir where a screenshot of the page goes when a step times out.
 * @returns the files written, relative to n8n/.
 * @throws when a page or an expected text does not appear within its timeout.
 */
export async function takeScreenshots(baseUrl: string, choice: PipelineChoice & { name: string }, debugDir: string): Promise<string[]> {
  const chromium = (await import("@sparticuz/chromium")).default;
  const { chromium: pw } = await import("playwright-core");
  const browser = await pw.launch({ executablePath: await chromium.executablePath(), args: chromium.args, headless: true });
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  try {
    await page.goto(`${baseUrl}/signin`);
    await page.getByLabel("Email").fill(OWNER.email);
    await page.getByLabel("Password").fill(OWNER.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL((url) => !url.pathname.startsWith("/signin"), { timeout: 30_000 });

    const files: string[] = [];
    await openNode(page, baseUrl, CREATE_WORKFLOW_ID, CREATE_NODE_ID, "Create Item");
    // a filled dropdown shows the option's name as its input's value
    const filled = `[...document.querySelectorAll("input")].some((input) => input.value === ${JSON.stringify(choice.name)})`;
    await page.waitForFunction(filled, undefined, { timeout: 20_000 });
    await page.waitForTimeout(2000);
    files.push(await save(page, "n8n-create-item"));

    await openNode(page, baseUrl, TRIGGER_WORKFLOW_ID, TRIGGER_NODE_ID, "Stageline Trigger");
    await page.getByText("Item Created", { exact: true }).filter({ visible: true }).first().waitFor({ timeout: 20_000 });
    await page.waitForTimeout(2000);
    files.push(await save(page, "n8n-trigger"));
    return files;
  } catch (err) {
    await page.screenshot({ path: path.join(debugDir, "screenshot-failure.png") }).catch(() => undefined);
    throw new Error(`${(err as Error).message.split("\n")[0]} (page as it was: ${path.join(debugDir, "screenshot-failure.png")})`);
  } finally {
    await browser.close();
  }
}
