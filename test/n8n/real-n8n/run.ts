/**
 * `npm run e2e:n8n` (in n8n/): the opt-in end-to-end run in a real n8n (issue 18). Not part of `npm test` or CI:
 * it installs Node 24 and n8n 2.41.1 into a cache folder on first use (several minutes, 3 GB; runtime.ts), starts a
 * Stageline server with the demo company (stageline.ts) and n8n headless with this package's dist folder
 * (n8n-process.ts), then checks, printing PASS or FAIL per step:
 *   (a) a workflow creates an item in Stageline (`n8n execute`, then GET /v1/ext/items?name=...);
 *   the credential test and two dropdowns, called as the editor calls them (n8n-rest.ts);
 *   (b) activating the trigger workflow subscribes one REST hook; after an n8n restart it is still the only one
 *       (checkExists found it); an item created through the API starts an execution holding that item;
 *   (c) deactivating deletes the subscription (GET /v1/ext/webhooks is empty).
 * With `--screenshots` it also saves editor screenshots to n8n/docs/ (screenshots.ts).
 * Exit code 0 when every step passed, 1 otherwise; every process it started is stopped either way.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { CREATE_WORKFLOW_ID, CREDENTIAL, TRIGGER_WORKFLOW_ID, createItemWorkflow, credentialFile, triggerWorkflow, type PipelineChoice } from "./fixtures";
import { n8nCliOk, n8nUrl, startN8n, type N8nHome, type N8nServer } from "./n8n-process";
import { N8nRest } from "./n8n-rest";
import { freePort } from "./processes";
import { ensureRuntime, N8N_VERSION, NODE_VERSION } from "./runtime";
import { takeScreenshots } from "./screenshots";
import { startStageline, stagelineApi, type StagelineServer } from "./stageline";
import { Steps, StopRun, waitFor } from "./steps";

const PACKAGE_DIR = path.resolve(__dirname, "..", "..", "..", "n8n");
const DIST = path.join(PACKAGE_DIR, "dist");

/** The subscriptions Stageline holds for the demo company. */
async function subscriptions(stageline: StagelineServer): Promise<Array<{ id: string; target_url: string; event: string }>> {
  const res = await stagelineApi(stageline, "GET", "/v1/ext/webhooks?limit=100");
  if (res.status !== 200) throw new Error(`GET /v1/ext/webhooks answered ${res.status}`);
  return res.body;
}

/** The demo pipeline's first stage and that stage's first status. */
async function demoPipeline(stageline: StagelineServer): Promise<PipelineChoice & { name: string }> {
  const pipelines = (await stagelineApi(stageline, "GET", "/v1/ext/pipelines")).body as Array<{ id: string; name: string }>;
  const pipeline = pipelines[0];
  if (!pipeline) throw new Error("Stageline has no pipeline");
  const stage = (await stagelineApi(stageline, "GET", `/v1/ext/pipelines/${pipeline.id}/stages`)).body[0];
  const status = (await stagelineApi(stageline, "GET", `/v1/ext/pipelines/${pipeline.id}/stages/${stage.id}/statuses`)).body[0];
  return { name: pipeline.name, pipelineId: pipeline.id, stageId: stage.id, statusId: status.id };
}

/** Everything the run started, so the `finally` can stop it. */
interface Started {
  stageline?: StagelineServer;
  n8n?: N8nServer;
  home?: N8nHome;
}

async function main(): Promise<number> {
  const withScreenshots = process.argv.includes("--screenshots");
  const began = Date.now();
  const steps = new Steps();
  const started: Started = {};
  console.log(`Stageline n8n end-to-end run: n8n ${N8N_VERSION} on Node ${NODE_VERSION}${withScreenshots ? ", with screenshots" : ""}`);
  try {
    await steps.run("package built", async () => {
      const trigger = path.join(DIST, "nodes", "StagelineTrigger", "StagelineTrigger.node.js");
      if (!fs.existsSync(trigger)) throw new Error(`${trigger} is missing: run "npm run build" in n8n/ first.`);
      return { detail: DIST };
    });
    const runtime = (await steps.run("runtime (Node 24 + n8n in the cache folder)", async () => {
      const value = ensureRuntime((line) => console.log(`      ${line}`));
      return { value, detail: value.installSeconds > 0 ? `installed in ${value.installSeconds} s` : "from the cache" };
    }))!;
    const stageline = (await steps.run("Stageline server with the demo company", async () => {
      started.stageline = await startStageline();
      return { value: started.stageline, detail: `${started.stageline.url} (${started.stageline.database})` };
    }))!;
    const choice = (await steps.run("demo pipeline read through the API", async () => {
      const value = await demoPipeline(stageline);
      return { value, detail: value.name };
    }))!;

    const home: N8nHome = { runtime, userFolder: fs.mkdtempSync(path.join(os.tmpdir(), "stageline-n8n-home-")), extensions: DIST, port: await freePort() };
    started.home = home;
    const itemName = `n8n e2e ${new Date().toISOString()}`;
    await steps.run("n8n import: credential and two workflows", async () => {
      const write = (name: string, data: unknown): string => {
        const file = path.join(home.userFolder, name);
        fs.writeFileSync(file, JSON.stringify(data, null, 2));
        return file;
      };
      await n8nCliOk(home, ["import:credentials", `--input=${write("credentials.json", credentialFile(stageline.url, stageline.apiKey))}`]);
      const workflows = path.join(home.userFolder, "workflows");
      fs.mkdirSync(workflows);
      write("workflows/create.json", createItemWorkflow(choice, itemName));
      write("workflows/trigger.json", triggerWorkflow());
      await n8nCliOk(home, ["import:workflow", "--separate", `--input=${workflows}`]);
      return { detail: `user folder ${home.userFolder}` };
    });

    await steps.run("(a) workflow creates an item in Stageline (n8n execute)", async () => {
      const output = await n8nCliOk(home, ["execute", `--id=${CREATE_WORKFLOW_ID}`, "--rawOutput"], { N8N_LOG_LEVEL: "info" });
      const found = await stagelineApi(stageline, "GET", `/v1/ext/items?name=${encodeURIComponent(itemName)}`);
      const item = (found.body as Array<{ item_id: string; short_id: string; name: string }>)[0];
      if (!item) throw new Error(`no item named "${itemName}" in Stageline; n8n printed:\n${output.slice(0, 2000)}`);
      if (!output.includes(item.item_id)) throw new Error(`n8n's output does not show the created item ${item.item_id}:\n${output.slice(0, 2000)}`);
      if ((item as { email?: unknown }).email !== "ada@example.com") throw new Error(`the custom field email was not set: ${JSON.stringify(item)}`);
      return { detail: `${item.short_id} "${item.name}"` };
    }, false);

    started.n8n = (await steps.run("n8n start (headless)", async () => {
      const value = await startN8n(home);
      return { value, detail: n8nUrl(home) };
    }))!;
    const rest = new N8nRest(n8nUrl(home));
    await steps.run("owner set-up through the REST API", async () => {
      await rest.setupOwner();
      return { detail: "session cookie received" };
    });

    await steps.run(
      "credential test as the editor runs it",
      async () => {
        const answer = await rest.call<{ status: string; message: string }>("POST", "/rest/credentials/test", {
          credentials: { ...CREDENTIAL, type: "stagelineApi", data: { apiKey: stageline.apiKey, baseUrl: stageline.url } },
        });
        if (answer.status !== "OK") throw new Error(`status ${answer.status}: ${answer.message}`);
        return { detail: "OK" };
      },
      false,
    );
    for (const [node, method, param, current, expect] of [
      ["CUSTOM.stagelineTrigger", "getPipelineFilter", "pipelineId", { events: ["item.created"] }, choice.name],
      ["CUSTOM.stageline", "getStages", "stageId", { resource: "item", operation: "create", pipelineId: choice.pipelineId }, undefined],
    ] as const) {
      await steps.run(
        `dropdown ${node} ${method} as the editor fills it`,
        async () => {
          const options = await rest.call<Array<{ name: string; value: string }>>("POST", "/rest/dynamic-node-parameters/options", {
            path: `parameters.${param}`,
            nodeTypeAndVersion: { name: node, version: 1 },
            currentNodeParameters: current,
            methodName: method,
            credentials: { stagelineApi: CREDENTIAL },
          });
          const names = options.map((o) => o.name);
          if (names.length === 0 || (expect !== undefined && !names.includes(expect))) throw new Error(`options: ${JSON.stringify(options)}`);
          return { detail: names.join(", ") };
        },
        false,
      );
    }

    const subscription = (await steps.run("(b) activating the trigger subscribes one REST hook", async () => {
      await rest.activate(TRIGGER_WORKFLOW_ID);
      // n8n 2.41 publishes through an outbox: the trigger's `create` runs shortly after the REST call returns.
      const subs = await waitFor("a subscription", async () => {
        const found = await subscriptions(stageline);
        return found.length > 0 ? found : undefined;
      });
      if (subs.length !== 1 || subs[0]!.event !== "item.created" || !subs[0]!.target_url.startsWith(`${n8nUrl(home)}/webhook/`)) {
        throw new Error(`subscriptions: ${JSON.stringify(subs)}`);
      }
      return { value: subs[0]!, detail: `${subs[0]!.event} → ${subs[0]!.target_url}` };
    }))!;

    await steps.run("(b) after an n8n restart the same subscription is the only one", async () => {
      await started.n8n!.stop();
      started.n8n = undefined;
      started.n8n = await startN8n(home);
      const subs = await subscriptions(stageline);
      if (subs.length !== 1 || subs[0]!.id !== subscription.id) throw new Error(`before ${subscription.id}, now ${JSON.stringify(subs)}`);
      return { detail: subscription.id };
    });

    await steps.run("(b) item.created delivery starts an execution with the item", async () => {
      const created = await stagelineApi(stageline, "POST", "/v1/ext/items", {
        name: `n8n trigger e2e ${Date.now()}`,
        pipeline_id: choice.pipelineId,
        stage_id: choice.stageId,
      });
      if (created.status !== 201) throw new Error(`POST /v1/ext/items answered ${created.status}: ${JSON.stringify(created.body)}`);
      const itemId = created.body.item_id as string;
      const execution = await waitFor(
        "a successful execution of the trigger workflow",
        async () => (await rest.executions(TRIGGER_WORKFLOW_ID)).find((e) => e.status === "success"),
        30_000,
      );
      const data = await rest.executionData(execution.id);
      if (!data.includes(itemId) || !data.includes("item.created")) throw new Error(`execution ${execution.id} does not hold item ${itemId}: ${data.slice(0, 1000)}`);
      return { detail: `execution ${execution.id} holds ${created.body.short_id} and "item.created"` };
    });

    if (withScreenshots) {
      await steps.run(
        "screenshots of the editor",
        async () => ({ detail: (await takeScreenshots(n8nUrl(home), choice, home.userFolder)).join(", ") }),
        false,
      );
    }

    await steps.run("(c) deactivating deletes the subscription", async () => {
      await rest.deactivate(TRIGGER_WORKFLOW_ID);
      await waitFor("no subscription left", async () => ((await subscriptions(stageline)).length === 0 ? true : undefined));
      return { detail: "GET /v1/ext/webhooks: []" };
    });
  } catch (err) {
    if (!(err instanceof StopRun)) {
      console.log(`FAIL  unexpected error: ${(err as Error).stack ?? String(err)}`);
      steps.results.push({ name: "unexpected error", ok: false, seconds: 0, detail: String(err) });
    }
  } finally {
    await started.n8n?.stop();
    await started.stageline?.stop();
    if (started.home) {
      if (steps.allPassed) fs.rmSync(started.home.userFolder, { recursive: true, force: true });
      else console.log(`n8n's user folder (logs: n8n-start.log) is kept at ${started.home.userFolder}`);
    }
  }
  console.log(steps.summary((Date.now() - began) / 1000));
  return steps.allPassed ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
