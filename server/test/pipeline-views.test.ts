/**
 * The console's read-only pipeline and item views (services/pipeline-views.ts) on a real server and database:
 * a pipeline with stages, statuses, custom fields and duplicate rule; its items newest first, keyset-paginated,
 * searchable by name or short ID through the API's data layer; an item with its custom fields and tasks.
 */
import type { AppContext } from "../src/context";
import { ITEM_PAGE_SIZE, describeItem, describePipeline, listPipelineItems, listPipelineSummaries } from "../src/services/pipeline-views";
import { startTestServer, type TestServer } from "./helpers/test-server";

describe("pipeline views (console)", () => {
  let t: TestServer;
  let ctx: AppContext;
  const created: { item_id: string; short_id: string; name: string }[] = [];

  beforeAll(async () => {
    t = await startTestServer();
    ctx = t.server.ctx;
    const p = t.pipeline;
    for (let i = 1; i <= ITEM_PAGE_SIZE + 3; i++) {
      const name = i === 7 ? "Globex 100% renewal" : `Deal ${i}`;
      const res = await t.request("POST", "/v1/ext/items", {
        name,
        pipeline_id: p.id,
        stage_id: p.stages[1]!.id,
        metadata: { email: `buyer${i}@example.com`, deal_value: i * 10 },
      });
      expect(res.status).toBe(201);
      created.push(res.body);
    }
  });
  afterAll(async () => {
    await t?.close();
  });

  it("describes a pipeline: stages and statuses in order, custom fields, duplicate rule", async () => {
    const overview = await describePipeline(ctx, t.companyId, t.pipeline.id);
    expect(overview.stages.map((s) => s.name)).toEqual(["Lead", "Qualified", "Proposal", "Closed"]);
    expect(overview.stages[0]!.statuses.map((s) => s.name)).toEqual(["Open", "Won", "Lost"]);
    expect(overview.customFields).toEqual([
      { key: "email", label: "Email", type: "email", required: false },
      { key: "deal_value", label: "Deal value", type: "number", required: false },
    ]);
    expect(overview.duplicateDetection).toEqual({ fields: ["email"], match: "any" });
    expect(await listPipelineSummaries(ctx, t.companyId)).toEqual([{ id: t.pipeline.id, name: "Sales", shortIdPrefix: "SALES", createdAt: expect.any(Date), stageCount: 4, customFieldCount: 2, archivedAt: null }]);
  });

  it("lists a pipeline's items newest first in keyset pages", async () => {
    const first = await listPipelineItems(ctx, t.companyId, t.pipeline.id);
    expect(first.items).toHaveLength(ITEM_PAGE_SIZE);
    expect(first.items[0]).toMatchObject({ item_id: created.at(-1)!.item_id, stage: "Qualified", status: "Open" });
    const second = await listPipelineItems(ctx, t.companyId, t.pipeline.id, { cursor: first.next! });
    expect(second.next).toBeNull();
    expect([...first.items, ...second.items].map((i) => i.item_id)).toEqual(created.map((c) => c.item_id).reverse());
  });

  it("finds an item by its short ID, case-insensitively", async () => {
    const target = created[11]!;
    const page = await listPipelineItems(ctx, t.companyId, t.pipeline.id, { search: target.short_id.toLowerCase() });
    expect(page.items.map((i) => i.item_id)).toEqual([target.item_id]);
  });

  it("finds items by part of the name, case-insensitively, taking % literally", async () => {
    const page = await listPipelineItems(ctx, t.companyId, t.pipeline.id, { search: "  globex 100% " });
    expect(page.items.map((i) => i.name)).toEqual(["Globex 100% renewal"]);
    expect((await listPipelineItems(ctx, t.companyId, t.pipeline.id, { search: "0%" })).items.map((i) => i.name)).toEqual(["Globex 100% renewal"]);
    expect((await listPipelineItems(ctx, t.companyId, t.pipeline.id, { search: "deal 5" })).items.map((i) => i.name)).toEqual(["Deal 53", "Deal 52", "Deal 51", "Deal 50", "Deal 5"]);
  });

  it("shows an item with its labelled custom fields and its tasks", async () => {
    const target = created[2]!;
    const task = await t.request("POST", "/v1/ext/tasks", { title: "Call buyer", due_at: "2027-01-01T09:00:00Z", assigned_to: "u1", item_id: target.item_id });
    expect(task.status).toBe(201);
    const overview = await describeItem(ctx, t.companyId, t.pipeline.id, target.item_id);
    expect(overview.item).toMatchObject({ item_id: target.item_id, name: "Deal 3" });
    expect(overview.fields).toEqual([
      { key: "email", label: "Email", type: "email", value: "buyer3@example.com" },
      { key: "deal_value", label: "Deal value", type: "number", value: 30 },
    ]);
    expect(overview.tasks.map((x) => x.title)).toEqual(["Call buyer"]);
  });

  it("answers 404 for another company's pipeline or item, and for an item of another pipeline", async () => {
    const other = await t.newCompany("Other Pipelines Co");
    await expect(describePipeline(ctx, other.companyId, t.pipeline.id)).rejects.toMatchObject({ status: 404 });
    await expect(listPipelineItems(ctx, other.companyId, t.pipeline.id)).rejects.toMatchObject({ status: 404 });
    await expect(describeItem(ctx, other.companyId, t.pipeline.id, created[0]!.item_id)).rejects.toMatchObject({ status: 404 });
    await expect(describeItem(ctx, t.companyId, other.pipeline.id, created[0]!.item_id)).rejects.toMatchObject({ status: 404 });
  });
});
