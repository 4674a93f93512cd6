/**
 * Editor screenshots for n8n/README.md, taken during the opt-in run (`--screenshots`) with a real headless Chromium
 * (playwright-core + @sparticuz/chromium, ../../../shared/BROWSER.md): the owner signs in, then the Create Item node's
 * parameter panel (pipeline, stage and status dropdowns filled by the package's loadOptions) and the trigger's panel
 * are saved as PNG files under n8n/docs/.
 */
import path from "node:path";
import type { Page } from "playwright-core";
import { CREATE_WORKFLOW_ID, TRIGGER_WORKFLOW_ID, type PipelineChoice } from "./fixtures";
import { OWNER } from "./n8n-rest";

const DOCS = path.resolve(__dirname, "..", "docs");

/** Opens a workflow and its node's parameter panel (double-click on the node, as a user does). */
async function openNode(page: Page, baseUrl: string, workflowId: string, nodeName: string): Promise<void> {
  await page.goto(`${baseUrl}/workflow/${workflowId}`);
  const node = page.getByText(nodeName, { exact: true }).first();
  await node.waitFor({ timeout: 30_000 });
  await node.dblclick();
  await page.getByText("Parameters", { exact: true }).first().waitFor({ timeout: 15_000 });
}

/**
 * Signs in and saves `n8n-create-item.png` and `n8n-trigger.png` under n8n/docs/.
 * @returns the files written.
 * @throws when a page or an expected label does not appear within its timeout.
 */
export async function takeScreenshots(baseUrl: string, choice: PipelineChoice & { name: string }): Promise<string[]> {
  const chromium = (await import("@sparticuz/chromium")).default;
  const { chromium: pw } = await import("playwright-core");
  const browser = await pw.launch({ executablePath: await chromium.executablePath(), args: chromium.args, headless: true });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
    await page.goto(`${baseUrl}/signin`);
    await page.getByLabel("Email").fill(OWNER.email);
    await page.getByLabel("Password").fill(OWNER.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL((url) => !url.pathname.startsWith("/signin"), { timeout: 30_000 });

    const files: string[] = [];
    await openNode(page, baseUrl, CREATE_WORKFLOW_ID, "Create Item");
    await page.getByText(choice.name, { exact: true }).first().waitFor({ timeout: 15_000 });
    await page.waitForTimeout(1500);
    files.push(path.join(DOCS, "n8n-create-item.png"));
    await page.screenshot({ path: files[files.length - 1] });

    await openNode(page, baseUrl, TRIGGER_WORKFLOW_ID, "Stageline Trigger");
    await page.waitForTimeout(1500);
    files.push(path.join(DOCS, "n8n-trigger.png"));
    await page.screenshot({ path: files[files.length - 1] });
    return files.map((f) => path.relative(path.resolve(DOCS, ".."), f));
  } finally {
    await browser.close();
  }
}
