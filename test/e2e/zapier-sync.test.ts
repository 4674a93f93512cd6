/**
 * Issue 25 through the Zapier connector, end to end: its own operations against a real Stageline server (real HTTP, a
 * fresh database, the demo data: Sales with duplicate detection on `email`) and real signed deliveries to a local
 * receiver standing in for Zapier.
 *
 * - "Item Deleted" subscribed with a Pipeline filter, "Delete Item" (a stale Version is refused, then the delete,
 *   then 404), the delivery through the trigger's `perform`; its sample from `?event=item.deleted`.
 * - "Create or Update Item": created, then updated, then unchanged, one item throughout.
 * - "Updated Item" with "Only when these fields change": a rename is not delivered, a new deal value is, with
 *   Previous Deal value.
 */
import { createAppTester, tools } from "zapier-platform-core";
import App from "../../connector/src/index";
import { findRequestLogEntry } from "../../server/src/db/request-log";
import { startServer, type RunningServer } from "../../server/src/server";
import { testConfig } from "../../server/test/helpers/test-server";
import { startReceiver, type Receiver } from "../../server/test/helpers/receiver";
import { asZapierHook } from "./helpers/zapier-hook";

tools.env.inject();
// As in zapier-story.test.ts: no http patch of core that would outlive this file.
const appTester = createAppTester({ ...App, flags: { ...App.flags, skipHttpPatch: true } });
type Bundle = Parameters<typeof appTester>[1];
type Fn = Parameters<typeof appTester>[0];
const op = (kind: "triggers" | "creates", key: string, fn: string) => ((App as any)[kind][key].operation as any)[fn] as Fn;

describe("issue 25 through the Zapier connector, end to end", () => {
  let server: RunningServer;
  let receiver: Receiver;
  let authData: { api_key: string; server_url: string };
  let salesId: string;
  let leadId: string;
  const bundle = (inputData: Record<string, unknown> = {}, extra: Partial<Bundle> = {}): Bundle => ({ authData, inputData, ...extra }) as Bundle;

  /** Deliveries to `path` of `event`. */
  const deliveries = (path: string, event: string) => receiver.requests.filter((r) => r.path === path && r.headers["x-webhook-event"] === event);

  beforeAll(async () => {
    server = await startServer(testConfig({ seedDemo: true }));
    authData = { api_key: server.demoApiKey!, server_url: server.url };
    receiver = await startReceiver();
    const pipelines = (await appTester(op("triggers", "pipeline_list", "perform"), bundle())) as any[];
    salesId = pipelines.find((p) => p.name === "Sales").id;
    const stages = (await appTester(op("triggers", "stage_list", "perform"), bundle({ pipeline_id: salesId }))) as any[];
    leadId = stages[0].id;
  });

  afterAll(async () => {
    await receiver?.close();
    await server?.close();
  });

  it("Item Deleted (filtered by pipeline) and Delete Item", async () => {
    const path = "/zap/deleted";
    const subscribeData = (await appTester(op("triggers", "item_deleted", "performSubscribe"), bundle({ pipeline_id: salesId }, { targetUrl: `${receiver.url}${path}` }))) as any;
    expect(subscribeData).toMatchObject({ event: "item.deleted", filter: { pipeline_id: salesId } });

    const samples = (await appTester(op("triggers", "item_deleted", "performList"), bundle())) as any[];
    expect(samples).toHaveLength(1);
    expect(samples[0]).toMatchObject({ id: samples[0].item_id, deleted_at: expect.any(String) });

    const created = (await appTester(
      op("creates", "create_item", "perform"),
      bundle({ pipeline_id: salesId, stage_id: leadId, name: "Delete me", custom__email: "gone@example.com", custom__deal_value: "10" }),
    )) as any;
    const stale = (await appTester(op("creates", "delete_item", "perform"), bundle({ item_id: created.item_id, version: 7 })).catch((e: Error) => e)) as Error;
    expect(stale.message).toMatch(/The item was not deleted: it changed since it was read \(Stageline now has version 1/);
    // CONTRACT "Request ids and the request log": the message ends with the request's id, which the request log (the
    // console's Requests search) finds as this refused DELETE.
    // (z.errors.Error's message is JSON: { message, code, status }.)
    const staleId = /\(request (req_[A-Za-z0-9_-]{22})\)$/.exec((JSON.parse(stale.message) as { message: string }).message)?.[1];
    expect(staleId).toBeDefined();
    await server.ctx.requestLog.flush();
    const company = (await server.ctx.db.sql.query<{ company_id: string }>("select company_id from request_log where request_id = $1", [staleId]))[0];
    expect(company).toBeDefined();
    expect(await findRequestLogEntry(server.ctx.db.sql, company!.company_id, staleId!)).toMatchObject({
      method: "DELETE",
      route: "/v1/ext/items/{item_id}",
      pathIds: { item_id: created.item_id },
      status: 409,
      code: "version_conflict",
    });
    const deleted = await appTester(op("creates", "delete_item", "perform"), bundle({ item_id: created.item_id, version: 1 }));
    expect(deleted).toEqual({ id: created.item_id, item_id: created.item_id, deleted: true });
    const again = (await appTester(op("creates", "delete_item", "perform"), bundle({ item_id: created.item_id })).catch((e: Error) => e)) as Error;
    expect(again.message).toMatch(/Stageline has no item .*: it was deleted already/);

    await receiver.waitFor(() => deliveries(path, "item.deleted").length >= 1, "the item.deleted delivery", 15_000);
    const output = (await appTester(op("triggers", "item_deleted", "perform"), bundle({ pipeline_id: salesId }, asZapierHook(deliveries(path, "item.deleted")[0]!, subscribeData) as Partial<Bundle>))) as any[];
    expect(output).toEqual([expect.objectContaining({ id: created.item_id, item_id: created.item_id, name: "Delete me", email: "gone@example.com", deleted_at: expect.any(String) })]);
    await appTester(op("triggers", "item_deleted", "performUnsubscribe"), bundle({}, { subscribeData } as Partial<Bundle>));
  });

  it("Create or Update Item: created, updated, unchanged; one item", async () => {
    const input = { pipeline_id: salesId, stage_id: leadId, name: "Upsert deal", custom__email: "upsert@example.com", custom__deal_value: "100" };
    const first = (await appTester(op("creates", "upsert_item", "perform"), bundle(input))) as any;
    expect(first).toMatchObject({ id: first.item_id, name: "Upsert deal", deal_value: 100, upsert_result: "created" });
    const second = (await appTester(op("creates", "upsert_item", "perform"), bundle({ ...input, custom__deal_value: "250" }))) as any;
    expect(second).toMatchObject({ item_id: first.item_id, deal_value: 250, upsert_result: "updated" });
    const third = (await appTester(op("creates", "upsert_item", "perform"), bundle({ ...input, custom__deal_value: "250", idempotency_key: "another run" }))) as any;
    expect(third).toMatchObject({ item_id: first.item_id, deal_value: 250, upsert_result: "unchanged" });
    // a retry of the first step (same input, same Idempotency-Key) replays its answer, header included
    const retried = (await appTester(op("creates", "upsert_item", "perform"), bundle(input))) as any;
    expect(retried).toMatchObject({ item_id: first.item_id, deal_value: 100, upsert_result: "created" });
    const found = (await appTester((App as any).searches.find_item.operation.perform, bundle({ name: "Upsert deal" }))) as any[];
    expect(found.map((i) => i.item_id)).toEqual([first.item_id]);
  });

  it("Updated Item with 'Only when these fields change': only those changes are delivered, with their previous values", async () => {
    const path = "/zap/updated";
    const inputData = { pipeline_id: salesId, filter_fields: ["deal_value"] };
    const subscribeData = (await appTester(op("triggers", "item_updated", "performSubscribe"), bundle(inputData, { targetUrl: `${receiver.url}${path}` }))) as any;
    expect(subscribeData.filter).toEqual({ pipeline_id: salesId, fields: ["deal_value"] });
    const created = (await appTester(
      op("creates", "create_item", "perform"),
      bundle({ pipeline_id: salesId, stage_id: leadId, name: "Filtered deal", custom__email: "filtered@example.com", custom__deal_value: "500" }),
    )) as any;
    await appTester(op("creates", "update_item", "perform"), bundle({ item_id: created.item_id, name: "Filtered deal, renamed" }));
    await appTester(op("creates", "update_item", "perform"), bundle({ item_id: created.item_id, pipeline_id: salesId, custom__deal_value: "750" }));
    await receiver.waitFor(() => deliveries(path, "item.updated").length >= 1, "the deal_value item.updated delivery", 15_000);
    await new Promise((resolve) => setTimeout(resolve, 500)); // a rename delivery, if one were made, would be here by now
    const updates = deliveries(path, "item.updated");
    expect(updates).toHaveLength(1);
    const output = (await appTester(op("triggers", "item_updated", "perform"), bundle(inputData, asZapierHook(updates[0]!, subscribeData) as Partial<Bundle>))) as any[];
    expect(output).toEqual([
      expect.objectContaining({ id: `${created.item_id}:3`, deal_value: 750, changed_fields: ["deal_value"], previous: expect.objectContaining({ deal_value: 500 }) }),
    ]);
    await appTester(op("triggers", "item_updated", "performUnsubscribe"), bundle({}, { subscribeData } as Partial<Bundle>));
  });
});
