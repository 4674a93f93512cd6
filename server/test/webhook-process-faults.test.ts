/**
 * Webhook deliveries when whole server processes fail or run side by side (CONTRACT.md "Events and deliveries":
 * events are written with their change (outbox), a crash loses none, delivery is at least once with `webhook-id`
 * for dedupe, and order per subscription follows event order). The server runs as it does in production, `node
 * server/dist/main.js` in its own process, so a `kill -9` really ends it mid-work, with no clean-up. Everything goes
 * through the external API with the demo company's key; a local receiver plays the subscribers.
 *
 * Database: a PGlite data directory on disk by default, a fresh PostgreSQL schema when TEST_DATABASE_URL is set.
 */
import { Webhook } from "standardwebhooks";
import { startReceiver, type Receiver, type ReceivedRequest } from "./helpers/receiver";
import {
  apiClient,
  createServerStore,
  eventually,
  killServerProcesses,
  startServerProcess,
  type ServerProcess,
  type ServerStore,
} from "./helpers/server-process";

jest.setTimeout(60_000);

const onPostgres = !!process.env.TEST_DATABASE_URL;

/** A server's API with the demo key; `expectStatus` fails with the response body when the status differs. */
function api(server: ServerProcess, apiKey: string) {
  const call = apiClient(server.url, apiKey);
  return async (method: string, path: string, body?: unknown, expectStatus = method === "POST" ? 201 : 200) => {
    const res = await call(method, path, body);
    if (res.status !== expectStatus) throw new Error(`${method} ${path} answered ${res.status}, not ${expectStatus}: ${JSON.stringify(res.body)}`);
    return res.body;
  };
}

/** The demo company's Sales pipeline and its first stage, looked up the way an integration does. */
async function salesPipeline(call: ReturnType<typeof api>): Promise<{ pipelineId: string; stageId: string }> {
  const pipelines: { id: string; name: string }[] = await call("GET", "/v1/ext/pipelines");
  const sales = pipelines.find((p) => p.name === "Sales");
  if (!sales) throw new Error(`no Sales pipeline among ${JSON.stringify(pipelines)}`);
  const stages: { id: string; name: string }[] = await call("GET", `/v1/ext/pipelines/${sales.id}/stages`);
  return { pipelineId: sales.id, stageId: stages[0].id };
}

/** What a subscriber got: each request's webhook-id and the item it is about. */
const received = (requests: ReceivedRequest[]) =>
  requests.map((r) => ({ webhookId: r.headers["webhook-id"], itemId: (JSON.parse(r.body.toString("utf8")) as { item_id: string }).item_id }));

/** The item ids in the order a subscriber first received them (dedupe by webhook-id, as a receiver does). */
function firstReceiptOrder(requests: ReceivedRequest[]): string[] {
  const seen = new Set<string>();
  const order: string[] = [];
  for (const { webhookId, itemId } of received(requests)) {
    if (seen.has(webhookId)) continue;
    seen.add(webhookId);
    order.push(itemId);
  }
  return order;
}

/** webhook-id -> item id over all requests; throws when one webhook-id came with two different items. */
function itemsByWebhookId(requests: ReceivedRequest[]): Map<string, string> {
  const map = new Map<string, string>();
  for (const { webhookId, itemId } of received(requests)) {
    if (map.has(webhookId) && map.get(webhookId) !== itemId) throw new Error(`webhook-id ${webhookId} carried items ${map.get(webhookId)} and ${itemId}`);
    map.set(webhookId, itemId);
  }
  return map;
}

interface DeliveryLogEntry {
  event_id: string;
  state: string;
  attempt_count: number;
}

describe("a server process killed with SIGKILL in the middle of webhook deliveries", () => {
  // Short lease and timeout, so the killed process's claims come back within seconds; a slow subscriber (300 ms per
  // answer), so the kill lands while deliveries are still going out.
  const DISPATCH_ENV = {
    WEBHOOK_LEASE_MS: "3500",
    WEBHOOK_TIMEOUT_MS: "1000",
    WEBHOOK_POLL_MS: "200",
    WEBHOOK_RETRY_BASE_MS: "100",
    RATE_LIMIT_PER_MINUTE: "10000",
  };
  const PATHS = ["/crm-a", "/crm-b"];
  const ITEMS = 20;
  let store: ServerStore;
  let rx: Receiver;
  let restarted: ServerProcess;
  let call: ReturnType<typeof api>;
  let apiKey: string;
  const subscriptions: { id: string; path: string; secret: string }[] = [];
  /** Item ids in creation order (all created, 201, before the kill). */
  const created: string[] = [];
  /** The request that was on its way when the process died (received, never answered to the dead sender). */
  let cutOff: ReceivedRequest;
  /** How many requests the subscribers had received when the process died. */
  let requestsBeforeKill: number;
  /** Each subscription's delivery log (GET .../deliveries) once every delivery succeeded. */
  const deliveryLogs = new Map<string, DeliveryLogEntry[]>();

  let first: ServerProcess | null = null;
  let armed = false;
  let crashing: Promise<void> | null = null;

  // Two hooks, each with its own time budget: the first start (a fresh database) and the items, then the crash.
  beforeAll(async () => {
    store = createServerStore();
    rx = await startReceiver({
      responder: (r) => {
        // Once every item exists and a few deliveries got through, kill the server the moment the next one arrives:
        // it is then waiting for this answer, with more claimed behind it.
        if (armed && !crashing && first && rx.accepted().length >= 3) {
          cutOff = r;
          requestsBeforeKill = rx.requests.length;
          crashing = first.crash();
        }
        return { delayMs: 300 };
      },
    });

    first = await startServerProcess(store, DISPATCH_ENV);
    if (!first.demoApiKey) throw new Error(`the first start did not seed the demo company:\n${first.output()}`);
    apiKey = first.demoApiKey;
    const firstCall = api(first, apiKey);
    for (const path of PATHS) {
      const sub = await firstCall("POST", "/v1/ext/webhooks", { target_url: rx.url + path, event: "item.created" });
      subscriptions.push({ id: sub.id, path, secret: sub.secret });
    }
    const { pipelineId, stageId } = await salesPipeline(firstCall);
    for (let i = 0; i < ITEMS; i++) {
      const item = await firstCall("POST", "/v1/ext/items", {
        name: `Crash-test deal ${i}`,
        pipeline_id: pipelineId,
        stage_id: stageId,
        metadata: { email: `buyer${i}@example.com`, deal_value: 1000 + i },
      });
      created.push(item.item_id);
    }
  }, 60_000);

  beforeAll(async () => {
    if (!first) throw new Error("the first server process did not start");
    armed = true;
    await eventually(() => crashing !== null, () => `a delivery in flight to kill the server on (${rx.requests.length} requests so far)`);
    await crashing;
    expect(first.exited()).toBe(true);

    restarted = await startServerProcess(store, DISPATCH_ENV);
    call = api(restarted, apiKey);
    const arrived = () => PATHS.every((p) => new Set(received(rx.requests.filter((r) => r.path === p)).map((x) => x.webhookId)).size === ITEMS);
    await eventually(arrived, () => `every event at both subscribers (${rx.requests.length} requests so far)`, 40_000);
    // Settled: every delivery is recorded as succeeded (the one the kill cut off only after a new attempt).
    for (const sub of subscriptions) {
      let log: DeliveryLogEntry[] = [];
      await eventually(
        async () => {
          log = await call("GET", `/v1/ext/webhooks/${sub.id}/deliveries?limit=100`);
          return log.length === ITEMS && log.every((d) => d.state === "succeeded");
        },
        () => `every delivery of ${sub.path} recorded as succeeded (${JSON.stringify(log.map((d) => d.state))})`,
      );
      deliveryLogs.set(sub.id, log);
    }
  }, 60_000);

  afterAll(async () => {
    await killServerProcesses();
    await rx?.close();
    await store?.remove();
  });

  it("keeps every item created before the kill", async () => {
    const items: { item_id: string }[] = await call("GET", `/v1/ext/items?limit=100`);
    expect(items.map((i) => i.item_id).sort()).toEqual([...created].sort());
  });

  it("delivers every event to every subscriber after the restart: the webhook-ids received are exactly the events queued", () => {
    for (const sub of subscriptions) {
      const byWebhookId = itemsByWebhookId(rx.requests.filter((r) => r.path === sub.path));
      expect([...byWebhookId.values()].sort()).toEqual([...created].sort());
      expect(byWebhookId.size).toBe(ITEMS);
      // The delivery log has one succeeded delivery per event, and its event ids are the webhook-ids received.
      expect(deliveryLogs.get(sub.id)!.map((d) => d.event_id).sort()).toEqual([...byWebhookId.keys()].sort());
    }
  });

  it("lets each subscriber first receive the events in the order the items were created", () => {
    for (const path of PATHS) {
      expect(firstReceiptOrder(rx.requests.filter((r) => r.path === path))).toEqual(created);
    }
  });

  it("sends the delivery the kill cut off again, under the same webhook-id and with the same body", () => {
    expect(requestsBeforeKill).toBeLessThan(ITEMS * PATHS.length); // the kill came mid-delivery, with more to send
    const again = rx.requests.filter((r) => r.index > cutOff.index && r.path === cutOff.path && r.headers["webhook-id"] === cutOff.headers["webhook-id"]);
    expect(again.length).toBeGreaterThanOrEqual(1);
    expect(again.some((r) => r.answered === 200)).toBe(true);
    for (const r of again) expect(r.body.equals(cutOff.body)).toBe(true);
  });

  it("signs what the restarted process sends with the subscriptions' secrets", () => {
    const afterRestart = rx.requests.filter((r) => r.index >= requestsBeforeKill);
    expect(afterRestart.length).toBeGreaterThan(0);
    for (const r of afterRestart) {
      const sub = subscriptions.find((s) => s.path === r.path)!;
      expect(() => new Webhook(sub.secret).verify(r.body.toString("utf8"), r.headers)).not.toThrow();
    }
  });
});

// Two processes on one database need PostgreSQL: the embedded PGlite belongs to the one process that opened it, so
// on PGlite there is no such deployment to test (the same claim logic with two dispatchers in one process is
// covered by webhook-delivery-faults.test.ts). This block is defined only in CI's PostgreSQL pass.
if (onPostgres) {
  describe("two server processes dispatching from one PostgreSQL database", () => {
    const PATHS = ["/p0", "/p1", "/p2", "/p3"];
    const ITEMS = 100;
    const ENV = { RATE_LIMIT_PER_MINUTE: "10000", LOG_LEVEL: "debug", WEBHOOK_POLL_MS: "200" };
    let store: ServerStore;
    let rx: Receiver;
    let a: ServerProcess;
    let b: ServerProcess;
    let callA: ReturnType<typeof api>;
    const subscriptions: { id: string; path: string }[] = [];
    /** Item ids in creation order, alternately through process A and process B. */
    const created: string[] = [];

    beforeAll(async () => {
      store = createServerStore();
      rx = await startReceiver({ responder: () => ({ delayMs: 20 }) });
      a = await startServerProcess(store, ENV);
      if (!a.demoApiKey) throw new Error(`the first start did not seed the demo company:\n${a.output()}`);
      b = await startServerProcess(store, ENV);
    }, 60_000);

    beforeAll(async () => {
      const apiKey = a.demoApiKey!;
      callA = api(a, apiKey);
      const callB = api(b, apiKey);
      for (const path of PATHS) {
        const sub = await callA("POST", "/v1/ext/webhooks", { target_url: rx.url + path, event: "item.created" });
        subscriptions.push({ id: sub.id, path });
      }
      const { pipelineId, stageId } = await salesPipeline(callA);
      for (let i = 0; i < ITEMS; i++) {
        const item = await (i % 2 === 0 ? callA : callB)("POST", "/v1/ext/items", { name: `Shared deal ${i}`, pipeline_id: pipelineId, stage_id: stageId });
        created.push(item.item_id);
      }
      await eventually(
        () => PATHS.every((p) => rx.accepted(p).length >= ITEMS),
        () => `${ITEMS} deliveries at each of ${PATHS.length} subscribers (${rx.requests.length} requests so far)`,
        40_000,
      );
      // Everything arrived; the deliveries' final states are written right after each answer.
      for (const sub of subscriptions) {
        await eventually(
          async () => {
            const log: DeliveryLogEntry[] = await callA("GET", `/v1/ext/webhooks/${sub.id}/deliveries?limit=500`);
            return log.length === ITEMS && log.every((d) => d.state === "succeeded");
          },
          () => `every delivery of ${sub.path} recorded as succeeded`,
        );
      }
    }, 60_000);

    afterAll(async () => {
      await killServerProcesses();
      await rx?.close();
      await store?.remove();
    });

    it("sends every event to every subscriber exactly once: no webhook-id arrives twice, none is missing", () => {
      for (const path of PATHS) {
        const requests = rx.requests.filter((r) => r.path === path);
        const ids = requests.map((r) => r.headers["webhook-id"]);
        expect(new Set(ids).size).toBe(ids.length);
        expect(requests).toHaveLength(ITEMS);
        expect([...itemsByWebhookId(requests).values()].sort()).toEqual([...created].sort());
      }
    });

    it("delivers to each subscriber in the order the items were created, whichever process created them", () => {
      for (const path of PATHS) expect(firstReceiptOrder(rx.requests.filter((r) => r.path === path))).toEqual(created);
    });

    it("shares the work between both processes, and attempts no delivery twice", async () => {
      // Each process logs "webhook delivered" (debug) with the delivery id right after recording the success.
      const deliveredBy = (p: ServerProcess) =>
        p.logs().filter((l) => l.msg === "webhook delivered").map((l) => String(l.deliveryId));
      await eventually(
        () => deliveredBy(a).length + deliveredBy(b).length >= ITEMS * PATHS.length,
        () => `${ITEMS * PATHS.length} "webhook delivered" log lines (${deliveredBy(a).length} + ${deliveredBy(b).length})`,
        10_000,
      );
      const byA = deliveredBy(a);
      const byB = deliveredBy(b);
      expect(byA.length).toBeGreaterThan(0);
      expect(byB.length).toBeGreaterThan(0);
      expect(byA.filter((id) => byB.includes(id))).toEqual([]);
      expect(new Set([...byA, ...byB]).size).toBe(ITEMS * PATHS.length);
      for (const sub of subscriptions) {
        const log: DeliveryLogEntry[] = await callA("GET", `/v1/ext/webhooks/${sub.id}/deliveries?limit=500`);
        expect(log.map((d) => d.attempt_count)).toEqual(Array(ITEMS).fill(1));
      }
    });
  });
}
