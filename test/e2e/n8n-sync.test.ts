/**
 * Issue 25 through the n8n nodes, end to end: Item → Delete and Item → Create or Update run by n8n-core's executor,
 * and the Stageline Trigger's server-side filter, against a real Stageline server (fresh database, demo data: Sales
 * with duplicate detection on `email`) with a local receiver standing in for n8n's webhook URL.
 */
import type { IDataObject, INodeParameters } from "n8n-workflow";
import { startServer, type RunningServer } from "../../server/src/server";
import { testConfig } from "../../server/test/helpers/test-server";
import { loadOptionsContext, runStageline, type StagelineCredential } from "../n8n/helpers/engine";
import { startDeliveryReceiver, type DeliveryReceiver } from "../n8n/helpers/delivery-receiver";
import { hookContext, webhookContext, type HookSetup, type WrittenResponse } from "../n8n/helpers/trigger-context";
import { getPipelines, getStages } from "../../n8n/nodes/Stageline/methods/loadOptions";
import { StagelineTrigger } from "../../n8n/nodes/StagelineTrigger/StagelineTrigger.node";

describe("issue 25 through the n8n nodes, end to end", () => {
  let server: RunningServer;
  let credential: StagelineCredential;
  let salesId: string;
  let leadId: string;

  beforeAll(async () => {
    server = await startServer(testConfig({ seedDemo: true }));
    credential = { apiKey: server.demoApiKey!, baseUrl: server.url };
    const pipelines = await getPipelines.call(loadOptionsContext(credential, { resource: "item", operation: "create" }));
    salesId = String(pipelines.find((p) => p.name === "Sales")!.value);
    const stages = await getStages.call(loadOptionsContext(credential, { resource: "item", operation: "create", pipelineId: salesId }));
    leadId = String(stages[0]!.value);
  });

  afterAll(async () => {
    await server?.close();
  });

  const createParams = (name: string, custom: Record<string, string | number>): INodeParameters => ({
    resource: "item",
    operation: "create",
    pipelineId: salesId,
    stageId: leadId,
    name,
    customFields: { mappingMode: "defineBelow", value: custom, schema: [] },
  });

  it("Item → Delete: a stale version is refused, then the item is deleted, then it is 404", async () => {
    const created = (await runStageline(credential, createParams("Delete me", { email: "n8n-gone@example.com" }), { executionId: "sync-1" })).output[0]!;
    const itemId = { __rl: true as const, mode: "id", value: String(created.item_id) };
    const stale = await runStageline(credential, { resource: "item", operation: "delete", itemId, deleteOptions: { version: 9 } });
    expect(stale.error).toMatchObject({ httpCode: "409" });
    const deleted = await runStageline(credential, { resource: "item", operation: "delete", itemId, deleteOptions: { version: 1 } });
    expect(deleted.error).toBeUndefined();
    expect(deleted.output).toEqual([{ item_id: created.item_id, deleted: true }]);
    const again = await runStageline(credential, { resource: "item", operation: "delete", itemId });
    expect(again.error).toMatchObject({ httpCode: "404" });
    const got = await runStageline(credential, { resource: "item", operation: "get", itemId });
    expect(got.error).toMatchObject({ httpCode: "404" });
  });

  it("Item → Create or Update: created, updated, unchanged; one item", async () => {
    const custom = (value: Record<string, string | number>) => ({ mappingMode: "defineBelow", value, schema: [] });
    const params: INodeParameters = { ...createParams("Upsert deal", { email: "n8n-upsert@example.com", deal_value: 100 }), operation: "upsert" };
    const first = await runStageline(credential, params, { executionId: "sync-2" });
    expect(first.error).toBeUndefined();
    expect(first.output[0]).toMatchObject({ name: "Upsert deal", deal_value: 100, upsert_result: "created" });
    const updated = await runStageline(credential, { ...params, customFields: custom({ email: "n8n-upsert@example.com", deal_value: 300 }) }, { executionId: "sync-3" });
    expect(updated.output[0]).toMatchObject({ item_id: first.output[0]!.item_id, deal_value: 300, upsert_result: "updated" });
    const unchanged = await runStageline(credential, { ...params, customFields: custom({ email: "n8n-upsert@example.com", deal_value: 300 }) }, { executionId: "sync-4" });
    expect(unchanged.output[0]).toMatchObject({ item_id: first.output[0]!.item_id, upsert_result: "unchanged" });
    const found = await runStageline(credential, { resource: "item", operation: "find", findBy: "name", findValue: "Upsert deal" });
    expect(found.output.map((i) => i.item_id)).toEqual([first.output[0]!.item_id]);
  });

  describe("the trigger's server-side filter", () => {
    let receiver: DeliveryReceiver;
    beforeAll(async () => {
      receiver = await startDeliveryReceiver();
    });
    afterAll(() => receiver?.close());

    it("subscribes with the filter; only the chosen field's changes are delivered, with previous values; Item Deleted too", async () => {
      const trigger = new StagelineTrigger();
      const setup: HookSetup = {
        baseUrl: server.url,
        apiKey: credential.apiKey,
        events: ["item.updated", "item.deleted"],
        webhookUrl: receiver.url,
        staticData: {},
        parameters: { pipelineId: salesId, changedFields: ["item:deal_value"] },
      };
      await expect(trigger.webhookMethods.default.create.call(hookContext(setup))).resolves.toBe(true);
      const listed = await fetch(`${server.url}/v1/ext/webhooks`, { headers: { "x-api-key": credential.apiKey } }).then((r) => r.json() as Promise<Array<{ event: string; filter: unknown }>>);
      expect(listed.map((s) => [s.event, s.filter]).sort()).toEqual([
        ["item.deleted", { pipeline_id: salesId }],
        ["item.updated", { pipeline_id: salesId, fields: ["deal_value"] }],
      ]);
      await expect(trigger.webhookMethods.default.checkExists.call(hookContext(setup))).resolves.toBe(true);

      const created = (await runStageline(credential, createParams("Trigger deal", { email: "n8n-trigger@example.com", deal_value: 5 }), { executionId: "sync-5" })).output[0]!;
      const itemId = { __rl: true as const, mode: "id", value: String(created.item_id) };
      await runStageline(credential, { resource: "item", operation: "update", itemId, updateFields: { name: "Trigger deal, renamed" } });
      await runStageline(credential, { resource: "item", operation: "update", itemId, updateFields: {}, customFields: { mappingMode: "defineBelow", value: { deal_value: 8 }, schema: [] } });
      const delivery = await receiver.waitFor("item.updated", String(created.item_id));
      const parameters = { events: setup.events, ...setup.parameters } as { events: string[] };
      const written: WrittenResponse = {};
      const run = await trigger.webhook.call(webhookContext(delivery, parameters, setup.staticData as IDataObject, written));
      expect(run.workflowData?.[0]?.[0]?.json).toMatchObject({ event: "item.updated", deal_value: 8, changed_fields: ["deal_value"], previous: { deal_value: 5 } });

      await runStageline(credential, { resource: "item", operation: "delete", itemId });
      const deletion = await receiver.waitFor("item.deleted", String(created.item_id));
      const deletedRun = await trigger.webhook.call(webhookContext(deletion, parameters, setup.staticData as IDataObject, {}));
      expect(deletedRun.workflowData?.[0]?.[0]?.json).toMatchObject({ event: "item.deleted", item_id: created.item_id, deleted_at: expect.any(String) });
      // the rename (not a chosen field) was never delivered
      expect(receiver.deliveries.filter((d) => d.headers["x-webhook-event"] === "item.updated")).toHaveLength(1);

      await expect(trigger.webhookMethods.default.delete.call(hookContext(setup))).resolves.toBe(true);
    });
  });
});
