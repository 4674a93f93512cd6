/**
 * CONTRACT "Subscription filters (REST hooks)": `filter` on POST /v1/ext/webhooks is checked against the company's
 * pipelines (422 `invalid_reference`), returned on every subscription object, and applied at fan-out: an excluded
 * event creates no delivery row at all (counted here in the database).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { consoleOverHttp, createConsoleUser } from "./helpers/console-browser";
import { createSalesPipeline, startTestServer, type TestPipeline, type TestServer } from "./helpers/test-server";

describe("subscription filters", () => {
  let t: TestServer;
  let receiver: http.Server;
  let target: string;
  let support: TestPipeline;
  beforeAll(async () => {
    t = await startTestServer();
    support = await createSalesPipeline(t.server, t.companyId, "Support");
    // A local receiver that accepts everything, so the running dispatcher never reaches outside the machine.
    receiver = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => res.writeHead(200).end("ok"));
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    target = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  });
  afterAll(async () => {
    await t?.close();
    await new Promise((resolve) => receiver?.close(resolve));
  });

  // A fresh key per test: each stays far below the per-key rate limit.
  let key: string;
  beforeEach(async () => {
    key = (await t.newKey()).key;
  });
  const sales = () => t.pipeline;
  const subscribe = async (event: string, filter?: unknown, headers: Record<string, string> = {}) => {
    const body: Record<string, unknown> = { target_url: target, event };
    if (filter !== undefined) body.filter = filter;
    return t.request("POST", "/v1/ext/webhooks", body, key, headers);
  };
  const subscribed = async (event: string, filter?: unknown) => {
    const res = await subscribe(event, filter);
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  /** Delivery rows of a subscription, whatever their state (the dispatcher may have sent them already). */
  const deliveries = (subscriptionId: string) => t.server.ctx.prisma.webhookDelivery.count({ where: { subscriptionId } });
  const createItem = async (pipeline: TestPipeline, extra: Record<string, unknown> = {}) => {
    const res = await t.request("POST", "/v1/ext/items", { name: "Deal", pipeline_id: pipeline.id, stage_id: pipeline.stages[0]!.id, ...extra }, key);
    expect(res.status).toBe(201);
    return res.body;
  };
  const patchItem = async (id: string, body: unknown) => {
    const res = await t.request("PATCH", `/v1/ext/items/${id}`, body, key);
    expect(res.status).toBe(200);
    return res.body;
  };
  const createTask = async (extra: Record<string, unknown> = {}) => {
    const res = await t.request("POST", "/v1/ext/tasks", { title: "Call", due_at: "2026-03-01T09:30:00Z", assigned_to: "ada", ...extra }, key);
    expect(res.status).toBe(201);
    return res.body;
  };
  const patchTask = async (id: string, body: unknown) => {
    const res = await t.request("PATCH", `/v1/ext/tasks/${id}`, body, key);
    expect(res.status).toBe(200);
    return res.body;
  };

  describe("applied at fan-out", () => {
    it("pipeline_id: item events of that pipeline only; other pipelines' events create no delivery row", async () => {
      const onlySupport = await subscribed("item.created", { pipeline_id: support.id });
      const everything = await subscribed("item.created");
      await createItem(sales());
      expect(await deliveries(onlySupport)).toBe(0);
      expect(await deliveries(everything)).toBe(1);
      await createItem(support);
      expect(await deliveries(onlySupport)).toBe(1);
      expect(await deliveries(everything)).toBe(2);
    });

    it("stage_id: item events of items in that stage after the change", async () => {
      const qualified = sales().stages[1]!;
      const updated = await subscribed("item.updated", { pipeline_id: sales().id, stage_id: qualified.id });
      const moved = await subscribed("item.stage_changed", { pipeline_id: sales().id, stage_id: qualified.id });
      const item = await createItem(sales());
      await patchItem(item.item_id, { stage_id: sales().stages[2]!.id });
      expect([await deliveries(updated), await deliveries(moved)]).toEqual([0, 0]);
      await patchItem(item.item_id, { stage_id: qualified.id });
      expect([await deliveries(updated), await deliveries(moved)]).toEqual([1, 1]);
      // Still in Qualified after a rename: item.updated passes, no stage_changed is written at all.
      await patchItem(item.item_id, { name: "Renamed" });
      expect([await deliveries(updated), await deliveries(moved)]).toEqual([2, 1]);
      // The same stage id filter never matches another pipeline's items.
      const other = await createItem(support);
      await patchItem(other.item_id, { stage_id: support.stages[1]!.id });
      expect([await deliveries(updated), await deliveries(moved)]).toEqual([2, 1]);
    });

    it("fields (item.updated): only when a named built-in or custom field changed", async () => {
      const dealValue = await subscribed("item.updated", { fields: ["deal_value"] });
      const stageOrName = await subscribed("item.updated", { pipeline_id: sales().id, fields: ["stage", "name"] });
      const item = await createItem(sales());
      await patchItem(item.item_id, { source: "crm" });
      expect([await deliveries(dealValue), await deliveries(stageOrName)]).toEqual([0, 0]);
      await patchItem(item.item_id, { metadata: { deal_value: 10 } });
      expect([await deliveries(dealValue), await deliveries(stageOrName)]).toEqual([1, 0]);
      await patchItem(item.item_id, { stage_id: sales().stages[1]!.id });
      expect([await deliveries(dealValue), await deliveries(stageOrName)]).toEqual([1, 1]);
      await patchItem(item.item_id, { name: "New name", metadata: { deal_value: 20 } });
      expect([await deliveries(dealValue), await deliveries(stageOrName)]).toEqual([2, 2]);
    });

    it("fields (task.updated): only when a named task field changed", async () => {
      const title = await subscribed("task.updated", { fields: ["title"] });
      const task = await createTask();
      await patchTask(task.task_id, { notes: "n" });
      expect(await deliveries(title)).toBe(0);
      await patchTask(task.task_id, { title: "Call again" });
      expect(await deliveries(title)).toBe(1);
    });

    it("pipeline_id on task events: tasks linked to an item of that pipeline; a task without item never matches", async () => {
      const created = await subscribed("task.created", { pipeline_id: sales().id });
      const updated = await subscribed("task.updated", { pipeline_id: sales().id });
      const completed = await subscribed("task.completed", { pipeline_id: sales().id });
      const salesItem = await createItem(sales());
      const supportItem = await createItem(support);
      const loose = await createTask();
      const elsewhere = await createTask({ item_id: supportItem.item_id });
      expect([await deliveries(created), await deliveries(updated)]).toEqual([0, 0]);
      await createTask({ item_id: salesItem.item_id });
      expect(await deliveries(created)).toBe(1);
      await patchTask(loose.task_id, { title: "Still loose" });
      await patchTask(elsewhere.task_id, { is_completed: true });
      expect([await deliveries(updated), await deliveries(completed)]).toEqual([0, 0]);
      // Linking a task to an item of the pipeline: the event sees the item after the change.
      await patchTask(loose.task_id, { item_id: salesItem.item_id, is_completed: true });
      expect([await deliveries(updated), await deliveries(completed)]).toEqual([1, 1]);
      expect(await deliveries(created)).toBe(1);
    });

    it("pipeline_id on the task.updated that unlinks a deleted item's tasks: the pipeline they were linked to", async () => {
      const salesTasks = await subscribed("task.updated", { pipeline_id: sales().id });
      const supportTasks = await subscribed("task.updated", { pipeline_id: support.id });
      const unfiltered = await subscribed("task.updated");
      const item = await createItem(sales());
      const tasks = [await createTask({ item_id: item.item_id }), await createTask({ item_id: item.item_id })];
      const kept = await createTask({ item_id: (await createItem(support)).item_id });
      expect((await t.request("DELETE", `/v1/ext/items/${item.item_id}`, undefined, key)).status).toBe(204);
      expect([await deliveries(salesTasks), await deliveries(supportTasks), await deliveries(unfiltered)]).toEqual([2, 0, 2]);
      const sent = await t.server.ctx.prisma.webhookDelivery.findMany({ where: { subscriptionId: salesTasks }, select: { event: { select: { type: true, resourceId: true, payload: true } } } });
      expect(sent.map((d) => d.event.resourceId).sort()).toEqual(tasks.map((task) => task.task_id).sort());
      for (const { event } of sent) {
        expect(event.type).toBe("task.updated");
        expect(event.payload).toMatchObject({ item_id: null, changed_fields: ["item_id"], previous: { item_id: item.item_id } });
      }
      // Afterwards the tasks have no item: their next change matches no pipeline filter (CONTRACT), the other
      // pipeline's task still matches its own.
      await patchTask(tasks[0].task_id, { title: "Loose now" });
      await patchTask(kept.task_id, { title: "Still linked" });
      expect([await deliveries(salesTasks), await deliveries(supportTasks), await deliveries(unfiltered)]).toEqual([2, 1, 4]);
    });

    it("writes no delivery row for an excluded event even when every subscription of the company excludes it", async () => {
      const ids = [];
      for (let i = 0; i < 5; i++) ids.push(await subscribed("item.created", { pipeline_id: support.id }));
      const before = await t.server.ctx.prisma.webhookDelivery.count({ where: { subscriptionId: { in: ids } } });
      await createItem(sales());
      await createItem(sales());
      expect(await t.server.ctx.prisma.webhookDelivery.count({ where: { subscriptionId: { in: ids } } })).toBe(before);
      expect(before).toBe(0);
    });
  });

  describe("subscription objects", () => {
    it("returns the filter on subscribe and in the list, null when none", async () => {
      const filter = { pipeline_id: sales().id, stage_id: sales().stages[0]!.id, fields: ["email", "stage"] };
      const res = await subscribe("item.updated", filter);
      expect(res.status).toBe(201);
      expect(res.body.filter).toEqual(filter);
      const plain = await subscribe("item.updated");
      expect(plain.body.filter).toBeNull();
      const explicitNull = await subscribe("item.updated", null);
      expect(explicitNull.body.filter).toBeNull();
      const list = await t.request("GET", "/v1/ext/webhooks?limit=500", undefined, key);
      const byId = new Map(list.body.map((s: { id: string; filter: unknown }) => [s.id, s.filter]));
      expect(byId.get(res.body.id)).toEqual(filter);
      expect(byId.get(plain.body.id)).toBeNull();
    });

    it("keeps field names once each, in the order given", async () => {
      const res = await subscribe("item.updated", { fields: ["name", "deal_value", "name"] });
      expect(res.status).toBe(201);
      expect(res.body.filter).toEqual({ fields: ["name", "deal_value"] });
    });

    it("replays an idempotent subscribe with a filter and creates one subscription", async () => {
      const headers = { "Idempotency-Key": `filter-${Date.now()}` };
      const filter = { pipeline_id: support.id };
      const first = await subscribe("item.created", filter, headers);
      const again = await subscribe("item.created", filter, headers);
      expect(first.status).toBe(201);
      expect(again.status).toBe(201);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(again.body).toEqual(first.body);
      expect(await t.server.ctx.prisma.webhookSubscription.count({ where: { id: first.body.id } })).toBe(1);
      const changed = await subscribe("item.created", { pipeline_id: sales().id }, headers);
      expect(changed.status).toBe(422);
      expect(changed.body.code).toBe("idempotency_key_reused");
    });

    it("accepts an archived pipeline (its items stay updatable)", async () => {
      const archived = await createSalesPipeline(t.server, t.companyId, "Old");
      await t.server.ctx.prisma.pipeline.update({ where: { id: archived.id }, data: { archivedAt: new Date() } });
      const res = await subscribe("item.updated", { pipeline_id: archived.id });
      expect(res.status).toBe(201);
    });

    it("shows a REST hook's filter on its console page (and none for an unfiltered one)", async () => {
      const id = await subscribed("item.updated", { pipeline_id: support.id, fields: ["deal_value", "name"] });
      const plain = await subscribed("item.updated");
      const consoleUser = await consoleOverHttp(t.url, await createConsoleUser(t, "member"));
      const page = await consoleUser.get(`/console/webhooks/${id}`);
      expect(page.status).toBe(200);
      const filter = /<dd id="endpoint-filter">([^<]*)<\/dd>/.exec(page.text)?.[1];
      expect(filter).toBe(`pipeline ${support.id}; only when one of these changes: deal_value, name`);
      expect((await consoleUser.get(`/console/webhooks/${plain}`)).text).not.toContain("endpoint-filter");
    });
  });

  describe("refused", () => {
    const expect422 = async (event: string, filter: unknown, path: string, bad: string) => {
      const before = await t.server.ctx.prisma.webhookSubscription.count();
      const res = await subscribe(event, filter);
      expect(res.status).toBe(422);
      expect(res.body.code).toBe("invalid_reference");
      expect(res.body.errors).toEqual([{ path, message: expect.stringContaining(`"${bad}"`) }]);
      expect(res.body.detail).toContain(bad);
      expect(await t.server.ctx.prisma.webhookSubscription.count()).toBe(before);
      return res.body;
    };

    it("an unknown pipeline_id", async () => {
      await expect422("item.created", { pipeline_id: "no-such-pipeline" }, "filter.pipeline_id", "no-such-pipeline");
    });

    it("another company's pipeline_id, exactly as an unknown one (nothing leaks)", async () => {
      const other = await t.newCompany("Filter Other Co");
      const theirs = await expect422("item.created", { pipeline_id: other.pipeline.id }, "filter.pipeline_id", other.pipeline.id);
      const unknown = await expect422("item.created", { pipeline_id: "01935d70-0000-7000-8000-000000000000" }, "filter.pipeline_id", "01935d70-0000-7000-8000-000000000000");
      expect(theirs.errors[0].message.replace(other.pipeline.id, "ID")).toBe(unknown.errors[0].message.replace("01935d70-0000-7000-8000-000000000000", "ID"));
      // Nor can its stage be named through one's own pipeline.
      await expect422("item.updated", { pipeline_id: sales().id, stage_id: other.pipeline.stages[0]!.id }, "filter.stage_id", other.pipeline.stages[0]!.id);
    });

    it("a stage of another pipeline", async () => {
      await expect422("item.updated", { pipeline_id: sales().id, stage_id: support.stages[0]!.id }, "filter.stage_id", support.stages[0]!.id);
    });

    it("an unknown item field, and a custom field key of another pipeline than the filter's", async () => {
      await expect422("item.updated", { fields: ["stage", "colour"] }, "filter.fields[1]", "colour");
      const custom = await createSalesPipeline(t.server, t.companyId, "Custom");
      await t.server.ctx.prisma.pipeline.update({
        where: { id: custom.id },
        data: { blueprint: { custom_fields: [{ key: "severity", label: "Severity", type: "text" }] } },
      });
      await expect422("item.updated", { pipeline_id: sales().id, fields: ["severity"] }, "filter.fields[0]", "severity");
      // Without a pipeline, a key of any of the company's pipelines is accepted.
      expect((await subscribe("item.updated", { fields: ["severity"] })).status).toBe(201);
      expect((await subscribe("item.updated", { pipeline_id: custom.id, fields: ["severity"] })).status).toBe(201);
    });

    it("a field that is not a task field for task.updated", async () => {
      await expect422("task.updated", { fields: ["title", "deal_value"] }, "filter.fields[1]", "deal_value");
    });

    it("shape errors are 400: stage without pipeline, fields on an event without changed-field filtering, unknown members", async () => {
      for (const [event, filter] of [
        ["item.updated", { stage_id: sales().stages[0]!.id }],
        ["item.created", { fields: ["name"] }],
        ["task.created", { pipeline_id: sales().id, stage_id: sales().stages[0]!.id }],
        ["item.updated", { fields: [] }],
        ["item.updated", { colour: "red" }],
      ] as const) {
        const res = await subscribe(event, filter);
        expect(res.status).toBe(400);
        expect(res.body.code).toBe("validation_failed");
      }
    });
  });
});
