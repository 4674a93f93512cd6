/**
 * Issue 30 through the Zapier connector, end to end: its own operations against a real Stageline server (real HTTP, a
 * fresh database, the demo data) and real signed deliveries to a local receiver standing in for Zapier.
 *
 * - A zap's "New Note" and "Create Note": subscribe (with the Pipeline filter) → Create Note on an item → the signed
 *   note.created delivery arrives and verifies → the trigger's `perform` turns it into the zap's output →
 *   unsubscribe → another note is not delivered. A note on an item of another pipeline is filtered out by the server.
 * - "Update Note" through the note picker, with a stale Version refused; "New Note" samples.
 * - "Assigned To": the people picker lists the demo owner; Create Task with the chosen user gives a task whose
 *   `assignee` names them, a custom value still works (assignee empty), and Find Task filters by the user.
 */
import { createAppTester, tools } from "zapier-platform-core";
import { Webhook } from "standardwebhooks";
import App from "../../connector/src/index";
import { startServer, type RunningServer } from "../../server/src/server";
import { createSalesPipeline, testConfig } from "../../server/test/helpers/test-server";
import { startReceiver, type Receiver } from "../../server/test/helpers/receiver";
import { asZapierHook } from "./helpers/zapier-hook";

tools.env.inject();
// As in zapier-story.test.ts: no http patch of core that would outlive this file.
const appTester = createAppTester({ ...App, flags: { ...App.flags, skipHttpPatch: true } });
type Bundle = Parameters<typeof appTester>[1];
type Fn = Parameters<typeof appTester>[0];
type Kind = "triggers" | "creates" | "searches";
const op = (kind: Kind, key: string, fn: string) => ((App as any)[kind][key].operation as any)[fn] as Fn;


describe("issue 30 through the Zapier connector, end to end", () => {
  let server: RunningServer;
  let receiver: Receiver;
  let authData: { api_key: string; server_url: string };
  let salesId: string;
  let supportId: string;
  const bundle = (inputData: Record<string, unknown> = {}, extra: Partial<Bundle> = {}): Bundle => ({ authData, inputData, ...extra }) as Bundle;
  const deliveries = (path: string) => receiver.requests.filter((r) => r.path === path);

  /**
   * Page 0 of a paging dropdown trigger, as Zapier asks for it (`bundle.meta.page`), with a stand-in for `z.cursor`
   * (which exists only on zapier.com).
   */
  async function firstPage(key: string, inputData: Record<string, unknown> = {}): Promise<any[]> {
    const perform = op("triggers", key, "perform") as (z: any, b: any) => Promise<any[]>;
    const cursor = { get: async () => null, set: async () => null };
    return (await appTester(((z: any, b: any) => perform({ ...z, cursor }, b)) as Fn, bundle(inputData, { meta: { page: 0 } } as Partial<Bundle>))) as any[];
  }

  /** A new item of `pipelineId` (its first stage) through Create Item. */
  async function newItem(pipelineId: string, name: string): Promise<any> {
    const stages = (await appTester(op("triggers", "stage_list", "perform"), bundle({ pipeline_id: pipelineId }))) as any[];
    return appTester(op("creates", "create_item", "perform"), bundle({ pipeline_id: pipelineId, stage_id: stages[0].id, name, custom__email: `${name.replace(/\W/g, "")}@example.com` }));
  }

  beforeAll(async () => {
    server = await startServer(testConfig({ seedDemo: true }));
    authData = { api_key: server.demoApiKey!, server_url: server.url };
    receiver = await startReceiver();
    const me = (await appTester(App.authentication!.test as Fn, bundle())) as any;
    supportId = (await createSalesPipeline(server, me.company.id, "Support")).id;
    const pipelines = (await appTester(op("triggers", "pipeline_list", "perform"), bundle())) as any[];
    salesId = pipelines.find((p) => p.name === "Sales").id;
  });

  afterAll(async () => {
    await receiver?.close();
    await server?.close();
  });

  it("New Note and Create Note: subscribe, create a note, the delivery triggers the zap, unsubscribe", async () => {
    const deal = await newItem(salesId, "Notes deal");
    const other = await newItem(supportId, "Other pipeline");

    // the item picker offers the new item (Create Note's Item input)
    const choices = await firstPage("item_list");
    expect(choices.map((c) => c.id)).toContain(deal.item_id);

    // 1. Turn the zap on: New Note, only notes on Sales items.
    const path = "/zap/notes";
    const subscribeData = (await appTester(op("triggers", "note_created", "performSubscribe"), bundle({ pipeline_id: salesId }, { targetUrl: `${receiver.url}${path}` } as Partial<Bundle>))) as any;
    expect(subscribeData).toMatchObject({ event: "note.created", filter: { pipeline_id: salesId } });
    expect(subscribeData.secret).toMatch(/^whsec_/);

    // 2. Create Note (Markdown kept as written, pinned); a note on the Support item is filtered out by the server.
    const body = "Call with Ada:\n\n- **annual** billing\n- 50 seats\n";
    const note = (await appTester(op("creates", "create_note", "perform"), bundle({ item_id: deal.item_id, body, pinned: "yes" }))) as any;
    expect(note).toMatchObject({ id: note.note_id, item_id: deal.item_id, body, pinned: true, version: 1 });
    await appTester(op("creates", "create_note", "perform"), bundle({ item_id: other.item_id, body: "Not for this zap" }));

    // a retry of the same step (same input) replays: one note, the same output
    const again = (await appTester(op("creates", "create_note", "perform"), bundle({ item_id: deal.item_id, body, pinned: "yes" }))) as any;
    expect(again.note_id).toBe(note.note_id);

    // 3. The signed delivery arrives and verifies; the trigger's perform gives the zap the note.
    await receiver.waitFor(() => deliveries(path).length >= 1, "the note.created delivery", 10_000);
    const delivery = deliveries(path)[0]!;
    expect(delivery.headers["x-webhook-event"]).toBe("note.created");
    const verified = new Webhook(subscribeData.secret).verify(delivery.body.toString("utf8"), {
      "webhook-id": delivery.headers["webhook-id"]!,
      "webhook-timestamp": delivery.headers["webhook-timestamp"]!,
      "webhook-signature": delivery.headers["webhook-signature"]!,
    }) as any;
    const { id: _zapierId, ...created } = note;
    expect(verified).toEqual(created);
    const output = (await appTester(op("triggers", "note_created", "perform"), bundle({ pipeline_id: salesId }, asZapierHook(delivery, subscribeData) as Partial<Bundle>))) as any[];
    expect(output).toEqual([note]);

    // samples for the Zap editor: the newest notes
    const samples = (await appTester(op("triggers", "note_created", "performList"), bundle())) as any[];
    expect(samples.length).toBeGreaterThanOrEqual(2);
    for (const sample of samples) expect(sample).toMatchObject({ id: sample.note_id, body: expect.any(String) });

    // 4. Turn the zap off: a further note is not delivered.
    expect(await appTester(op("triggers", "note_created", "performUnsubscribe"), bundle({}, { subscribeData } as Partial<Bundle>))).toEqual({ id: subscribeData.id, removed: true });
    await appTester(op("creates", "create_note", "perform"), bundle({ item_id: deal.item_id, body: "After the zap was turned off" }));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(deliveries(path)).toHaveLength(1);
  });

  it("Update Note through the note picker; a stale Version is refused", async () => {
    const deal = await newItem(salesId, "Update notes deal");
    const note = (await appTester(op("creates", "create_note", "perform"), bundle({ item_id: deal.item_id, body: "# Pricing\nfirst draft" }))) as any;
    const choices = await firstPage("note_list", { item_id: deal.item_id });
    expect(choices).toEqual([{ id: note.note_id, label: "# Pricing", item_id: deal.item_id, pinned: false, updated_at: note.updated_at }]);

    const updated = (await appTester(op("creates", "update_note", "perform"), bundle({ item_id: deal.item_id, note_id: note.note_id, pinned: "true", version: "1" }))) as any;
    expect(updated).toMatchObject({ id: note.note_id, body: "# Pricing\nfirst draft", pinned: true, version: 2 });
    await expect(
      appTester(op("creates", "update_note", "perform"), bundle({ note_id: note.note_id, body: "overwritten", version: "1" })),
    ).rejects.toThrow(/2/);
    const rewritten = (await appTester(op("creates", "update_note", "perform"), bundle({ note_id: note.note_id, body: "final text" }))) as any;
    expect(rewritten).toMatchObject({ body: "final text", pinned: true, version: 3 });
    await expect(appTester(op("creates", "update_note", "perform"), bundle({ note_id: "00000000-0000-4000-8000-000000000000", pinned: "no" }))).rejects.toThrow();
  });

  it("Assigned To: the people picker, a task assigned to a user names them, a custom value still works", async () => {
    const users = await firstPage("user_list");
    expect(users.length).toBeGreaterThanOrEqual(1);
    const owner = users[0];
    expect(owner).toMatchObject({ id: expect.any(String), email: expect.stringContaining("@") });
    expect(owner.label).toContain(owner.email);

    const due_at = "2026-12-01T10:00:00.000Z";
    const assigned = (await appTester(op("creates", "create_task", "perform"), bundle({ title: "Send the proposal", due_at, assigned_to: owner.id }))) as any;
    expect(assigned).toMatchObject({ assigned_to: owner.id, assignee: { user_id: owner.id, email: owner.email, name: owner.name } });
    const custom = (await appTester(op("creates", "create_task", "perform"), bundle({ title: "Send the proposal", due_at, assigned_to: "partner@elsewhere.example" }))) as any;
    expect(custom).toMatchObject({ assigned_to: "partner@elsewhere.example", assignee: null });

    const reassigned = (await appTester(op("creates", "update_task", "perform"), bundle({ task_id: custom.task_id, assigned_to: owner.id }))) as any;
    expect(reassigned.assignee).toMatchObject({ user_id: owner.id });

    const found = (await appTester(op("searches", "find_task", "perform"), bundle({ title: "send the proposal", assigned_to: owner.id }))) as any[];
    expect(found.map((t) => t.task_id).sort()).toEqual([assigned.task_id, custom.task_id].sort());
  });
});
