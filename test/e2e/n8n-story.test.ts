/**
 * The n8n node end to end (issue 18): the Stageline node, run by n8n-core's real executor (n8n/test/helpers/engine.ts),
 * against a real Stageline server started here (real HTTP, a fresh database: PGlite, or a PostgreSQL schema when
 * TEST_DATABASE_URL is set; the demo data `npm start` seeds).
 *
 * dropdowns (pipeline → stage → status) and the blueprint's custom fields → create an item (again with the same
 * execution: no second item) → update it → find it by short ID and name → list items → duplicate check → task
 * create, update, list, complete → pickers → a refused value as NodeApiError and under Continue On Fail.
 */
import { startServer, type RunningServer } from "../../server/src/server";
import { testConfig } from "../../server/test/helpers/test-server";
import { loadOptionsContext, runStageline, type StagelineCredential } from "../n8n/helpers/engine";
import { getPipelines, getStages, getStatuses } from "../../n8n/nodes/Stageline/methods/loadOptions";
import { searchItems, searchTasks } from "../../n8n/nodes/Stageline/methods/listSearch";
import { getCustomFieldsForCreate } from "../../n8n/nodes/Stageline/methods/resourceMapping";
import { listPage } from "../../n8n/nodes/shared/transport";

describe("an n8n workflow against a real Stageline server", () => {
  let server: RunningServer;
  let credential: StagelineCredential;

  beforeAll(async () => {
    server = await startServer(testConfig({ seedDemo: true }));
    credential = { apiKey: server.demoApiKey!, baseUrl: server.url };
  });

  afterAll(async () => {
    await server?.close();
  });

  it("runs items and tasks from the dropdowns to completion", async () => {
    // 1. Dropdowns and custom fields, as the editor fills them.
    const pipelines = await getPipelines.call(loadOptionsContext(credential, { resource: "item", operation: "create" }));
    const sales = pipelines.find((p) => p.name === "Sales")!;
    expect(sales).toBeDefined();
    const createParams = { resource: "item", operation: "create", pipelineId: sales.value };
    const stages = await getStages.call(loadOptionsContext(credential, createParams));
    expect(stages.map((s) => s.name)).toEqual(["Lead", "Qualified", "Proposal", "Closed"]);
    const [lead, qualified] = stages;
    const statuses = await getStatuses.call(loadOptionsContext(credential, { ...createParams, stageId: lead!.value }));
    expect(statuses.map((s) => s.name)).toEqual(["Open", "Won", "Lost"]);
    const mapper = await getCustomFieldsForCreate.call(loadOptionsContext(credential, createParams));
    expect(mapper.fields.map((f) => [f.id, f.type])).toEqual(expect.arrayContaining([["email", "string"], ["deal_value", "number"]]));

    // 2. Create an item with custom fields; the same execution again (Retry On Fail) creates nothing more.
    const create = {
      ...createParams,
      stageId: lead!.value,
      statusId: statuses[0]!.value,
      name: "First deal",
      customFields: { mappingMode: "defineBelow", value: { email: "first@example.com", deal_value: "1200" }, schema: [] },
      additionalFields: { source: "n8n" },
    };
    const created = await runStageline(credential, create, { executionId: "e2e-1" });
    expect(created.error).toBeUndefined();
    const item = created.output[0]!;
    expect(item).toMatchObject({ name: "First deal", pipeline: "Sales", stage: "Lead", status: "Open", email: "first@example.com", deal_value: 1200, version: 1, source: "n8n" });
    const again = await runStageline(credential, create, { executionId: "e2e-1" });
    expect(again.output[0]!.item_id).toBe(item.item_id);
    const another = await runStageline(credential, { ...create, name: "Second deal", customFields: { mappingMode: "defineBelow", value: { email: "second@example.com" }, schema: [] } }, { executionId: "e2e-2" });
    expect(another.output[0]!.item_id).not.toBe(item.item_id);

    // 3. Update: move to Qualified (the stage dropdown on Update lists the item's pipeline) and change a custom field.
    const itemId = { __rl: true as const, mode: "list", value: String(item.item_id) };
    const updateStages = await getStages.call(loadOptionsContext(credential, { resource: "item", operation: "update", itemId }));
    expect(updateStages.map((s) => s.value)).toContain(qualified!.value);
    const updated = await runStageline(credential, {
      resource: "item",
      operation: "update",
      itemId,
      updateFields: { stageId: qualified!.value, version: 1 },
      customFields: { mappingMode: "defineBelow", value: { deal_value: 1500 }, schema: [] },
    });
    expect(updated.error).toBeUndefined();
    expect(updated.output[0]).toMatchObject({ stage: "Qualified", deal_value: 1500, version: 2 });

    // 4. Find by short ID and by name; get; list with filters and a limit.
    const byShortId = await runStageline(credential, { resource: "item", operation: "find", findBy: "shortId", findValue: String(item.short_id).toLowerCase() });
    expect(byShortId.output.map((i) => i.item_id)).toEqual([item.item_id]);
    const byName = await runStageline(credential, { resource: "item", operation: "find", findBy: "name", findValue: " first deal ", findPipelineId: sales.value });
    expect(byName.output.map((i) => i.item_id)).toEqual([item.item_id]);
    const got = await runStageline(credential, { resource: "item", operation: "get", itemId });
    expect(got.output[0]).toMatchObject({ item_id: item.item_id, version: 2 });
    const listed = await runStageline(credential, { resource: "item", operation: "getMany", returnAll: false, limit: 1, filters: { pipelineId: sales.value, search: "deal" } });
    expect(listed.output).toHaveLength(1);
    const all = await runStageline(credential, { resource: "item", operation: "getMany", returnAll: true, filters: { pipelineId: sales.value, stageId: qualified!.value } });
    expect(all.output.map((i) => i.item_id)).toEqual([item.item_id]);
    // the server's own Link: rel="next" URL, followed by the transport, gives the next page
    const context = loadOptionsContext(credential, { resource: "item", operation: "getMany" });
    const page1 = await listPage<{ item_id: string }>(context, { url: "/v1/ext/items", qs: { pipeline_id: sales.value, limit: 1 } });
    expect(page1.next).toEqual(expect.stringContaining("cursor="));
    const page2 = await listPage<{ item_id: string }>(context, { url: page1.next! });
    expect([...page1.results, ...page2.results].map((i) => i.item_id).sort()).toEqual([item.item_id, another.output[0]!.item_id].sort());

    // 5. Duplicate check on the email.
    const dupes = await runStageline(credential, {
      resource: "item",
      operation: "checkDuplicates",
      pipelineId: sales.value,
      name: "",
      customFields: { mappingMode: "defineBelow", value: { email: "first@example.com" }, schema: [] },
    });
    expect(dupes.output.map((d) => d.item_id)).toEqual([item.item_id]);

    // 6. Tasks: create (twice in one execution: one task), update, list by item, complete.
    const taskCreate = {
      resource: "task",
      operation: "create",
      title: "Call the customer",
      dueAt: "2026-03-01T09:00:00.000Z",
      assignedTo: "maria@acme.example",
      additionalFields: { itemId: String(item.item_id), priority: "high", taskType: "call" },
    };
    const task = (await runStageline(credential, taskCreate, { executionId: "e2e-3" })).output[0]!;
    expect(task).toMatchObject({ title: "Call the customer", priority: "high", task_type: "call", item_id: item.item_id, is_completed: false });
    expect((await runStageline(credential, taskCreate, { executionId: "e2e-3" })).output[0]!.task_id).toBe(task.task_id);
    const taskId = { __rl: true as const, mode: "id", value: String(task.task_id) };
    const taskUpdated = await runStageline(credential, { resource: "task", operation: "update", taskId, updateFields: { title: "Call the customer back", notes: "Asked for a quote" } });
    expect(taskUpdated.output[0]).toMatchObject({ title: "Call the customer back", notes: "Asked for a quote" });
    const tasks = await runStageline(credential, { resource: "task", operation: "getMany", returnAll: true, filters: { itemId: { __rl: true as const, mode: "id", value: String(item.item_id) }, isCompleted: "false" } });
    expect(tasks.output.map((t) => t.task_id)).toEqual([task.task_id]);
    const completed = await runStageline(credential, { resource: "task", operation: "complete", taskId });
    expect(completed.output[0]).toMatchObject({ is_completed: true });
    expect(completed.output[0]!.completed_at).toEqual(expect.any(String));

    // 7. Pickers.
    const pickedItems = await searchItems.call(loadOptionsContext(credential, { resource: "item", operation: "get" }), "first");
    expect(pickedItems.results).toEqual([{ name: `First deal (${item.short_id})`, value: item.item_id }]);
    const pickedTasks = await searchTasks.call(loadOptionsContext(credential, { resource: "task", operation: "get" }), "back");
    expect(pickedTasks.results.map((r) => r.value)).toEqual([task.task_id]);

    // 8. A refused value: NodeApiError naming the field; under Continue On Fail the error is the item's output.
    const bad = { ...create, customFields: { mappingMode: "defineBelow", value: { email: "not-an-email" }, schema: [] } };
    const failed = await runStageline(credential, bad, { executionId: "e2e-4" });
    expect(failed.error?.description).toContain("metadata.email");
    const continued = await runStageline(credential, bad, { executionId: "e2e-5", continueOnFail: true });
    expect(continued.error).toBeUndefined();
    expect(continued.output[0]).toMatchObject({ error: expect.any(String), description: expect.stringContaining("metadata.email") });
  });

  it("says what to do about a wrong API key", async () => {
    const result = await runStageline({ ...credential, apiKey: "sl_wrong" }, { resource: "pipeline", operation: "getMany" });
    expect(result.error?.message).toContain("Create a new key in Stageline under Company Settings → API Keys");
    expect(result.error?.httpCode).toBe("401");
  });
});
