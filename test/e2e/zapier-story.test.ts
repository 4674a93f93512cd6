/**
 * The whole story, end to end: the Zapier connector's own operations drive a real Stageline server (real HTTP, a
 * fresh real database, the demo data `npm start` seeds) and a real signed webhook delivery to a local receiver.
 *
 * auth test → pipeline/stage/status dropdowns → Create Item → subscribe "New Item" with the receiver as targetUrl →
 * create an item → the signed delivery arrives and verifies with `standardwebhooks` → the trigger's `perform` turns
 * it into the zap's output → unsubscribe → create another item → nothing more arrives.
 */
import { createAppTester, tools } from "zapier-platform-core";
import { Webhook } from "standardwebhooks";
import App from "../../connector/src/index";
import { startServer, type RunningServer } from "../../server/src/server";
import { testConfig } from "../../server/test/helpers/test-server";
import { startReceiver, type Receiver } from "../../server/test/helpers/receiver";
import { asZapierHook } from "./helpers/zapier-hook";

tools.env.inject();
// Core patches Node's shared http module for request logging unless `skipHttpPatch` is set; in a jest worker that
// patch would outlive this file and change the server's own outgoing webhook requests in later test files.
const appTester = createAppTester({ ...App, flags: { ...App.flags, skipHttpPatch: true } });

type Bundle = Parameters<typeof appTester>[1];

describe("a no-code user's zap, end to end", () => {
  let server: RunningServer;
  let receiver: Receiver;
  let authData: { api_key: string; server_url: string };
  const bundle = (inputData: Record<string, unknown> = {}, extra: Partial<Bundle> = {}): Bundle =>
    ({ authData, inputData, ...extra }) as Bundle;

  beforeAll(async () => {
    server = await startServer(testConfig({ seedDemo: true }));
    expect(server.demoApiKey).toMatch(/^sl_/);
    authData = { api_key: server.demoApiKey!, server_url: server.url };
    receiver = await startReceiver();
  });

  afterAll(async () => {
    await receiver?.close();
    await server?.close();
  });

  it("runs the story from connection to unsubscribe", async () => {
    // 1. Connect: the auth test names the company and the key.
    const me = (await appTester(App.authentication!.test as any, bundle())) as any;
    expect(me.company.name).toBe("Demo Company");
    expect(me.key.name).toBe("Demo key");

    // 2. Dropdowns: pipeline → stage → status.
    const pipelines = (await appTester((App.triggers!.pipeline_list.operation as any).perform as any, bundle())) as any[];
    const sales = pipelines.find((p) => p.name === "Sales");
    expect(sales).toBeDefined();
    const stages = (await appTester((App.triggers!.stage_list.operation as any).perform as any, bundle({ pipeline_id: sales.id }))) as any[];
    expect(stages.map((s) => s.name)).toEqual(["Lead", "Qualified", "Proposal", "Closed"]);
    const lead = stages[0];
    const statuses = (await appTester(
      (App.triggers!.status_list.operation as any).perform as any,
      bundle({ pipeline_id: sales.id, stage_id: lead.id }),
    )) as any[];
    expect(statuses.map((s) => s.name)).toEqual(["Open", "Won", "Lost"]);
    const open = statuses[0];

    // 3. Create Item through the action, custom fields from the blueprint.
    const created = (await appTester(
      App.creates!.create_item.operation.perform as any,
      bundle({
        pipeline_id: sales.id,
        stage_id: lead.id,
        status_id: open.id,
        name: "First deal",
        custom__email: "first@example.com",
        custom__deal_value: "1200",
      }),
    )) as any;
    expect(created).toMatchObject({ name: "First deal", pipeline: "Sales", stage: "Lead", status: "Open", email: "first@example.com", deal_value: 1200, version: 1, source: "zapier" });
    expect(created.short_id).toBe("SALES-1");

    // 4. Turn the zap on: subscribe "New Item" with the receiver as the target URL.
    const targetUrl = `${receiver.url}/zap/123`;
    const subscribeData = (await appTester(
      (App.triggers!.item_created.operation as any).performSubscribe as any,
      bundle({}, { targetUrl } as Partial<Bundle>),
    )) as any;
    expect(subscribeData).toMatchObject({ target_url: targetUrl, event: "item.created" });
    expect(subscribeData.secret).toMatch(/^whsec_/);

    // 5. An item is created; the signed delivery arrives.
    const second = (await appTester(
      App.creates!.create_item.operation.perform as any,
      bundle({ pipeline_id: sales.id, stage_id: lead.id, name: "Second deal", custom__email: "second@example.com", custom__deal_value: "99.5" }),
    )) as any;
    await receiver.waitFor(() => receiver.requests.length >= 1, "the item.created delivery", 10_000);
    const delivery = receiver.requests[0]!;
    expect(delivery.path).toBe("/zap/123");
    expect(delivery.headers["x-webhook-event"]).toBe("item.created");
    const verified = new Webhook(subscribeData.secret).verify(delivery.body.toString("utf8"), {
      "webhook-id": delivery.headers["webhook-id"]!,
      "webhook-timestamp": delivery.headers["webhook-timestamp"]!,
      "webhook-signature": delivery.headers["webhook-signature"]!,
    }) as any;
    const { id: zapierId, ...secondItem } = second; // the action adds `id` (= item_id) for Zapier
    expect(zapierId).toBe(second.item_id);
    expect(verified).toEqual(secondItem);

    // 6. Zapier runs the trigger's perform on the delivery: the zap gets the item, with an id to dedupe on.
    const output = (await appTester(
      (App.triggers!.item_created.operation as any).perform as any,
      // as Zapier passes a hook request: headers capitalised with an "Http-" prefix, the exact body, the parsed body
      bundle({}, asZapierHook(delivery, subscribeData) as Partial<Bundle>),
    )) as any[];
    expect(output).toHaveLength(1);
    expect(output[0]).toMatchObject({ id: second.item_id, item_id: second.item_id, name: "Second deal", email: "second@example.com", deal_value: 99.5 });

    // 7. Turn the zap off: unsubscribe; a further item is not delivered.
    await appTester((App.triggers!.item_created.operation as any).performUnsubscribe as any, bundle({}, { subscribeData } as Partial<Bundle>));
    await appTester(
      App.creates!.create_item.operation.perform as any,
      bundle({ pipeline_id: sales.id, stage_id: lead.id, name: "Third deal", custom__email: "third@example.com" }),
    );
    // The dispatcher is woken on commit and delivers within milliseconds; give it ample time to (not) do so.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(receiver.requests).toHaveLength(1);
    const pending = await server.ctx.prisma.webhookDelivery.count();
    expect(pending).toBe(0); // the subscription and its deliveries are gone, nothing queued for it
  });
});
