/**
 * client/examples/webhook-receiver.ts, run as a script: subscribed with the client to its URL, it gets the server's
 * real signed item.created delivery and prints it once; it answers 401 to a forged signature, a tampered body, a
 * delivery signed with another secret, a stale or future timestamp and missing headers, and 204 without printing
 * again to a repeated delivery.
 */
import net from "node:net";
import { Webhook } from "standardwebhooks";
import { clientEnv, runExample, startExampleServer, type ExampleRun, type ExampleServer } from "./helpers";

let s: ExampleServer;
let receiver: ExampleRun;
let url: string;
let secret: string;
let subscriptionId: string;

/** A TCP port that was free a moment ago (the receiver must listen where the subscription already points). */
async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  s = await startExampleServer();
  const port = await freePort();
  url = `http://127.0.0.1:${port}/webhooks/stageline`;
  const subscription = await s.client.webhooks.subscribe({ target_url: url, event: "item.created" });
  secret = subscription.secret;
  subscriptionId = subscription.id;
  receiver = runExample("webhook-receiver.ts", [], { ...clientEnv(s), STAGELINE_WEBHOOK_SECRET: secret, PORT: String(port) });
  await receiver.line(/^Listening on http:\/\/127\.0\.0\.1:\d+\/webhooks\/stageline$/);
}, 60_000);

afterAll(async () => {
  if (subscriptionId) await s.client.webhooks.unsubscribe(subscriptionId).catch(() => undefined);
  if (receiver) {
    receiver.child.kill("SIGTERM");
    await receiver.exit;
  }
  await s?.server.close();
});

/** Posts `body` to the receiver with Standard Webhooks headers. */
async function deliver(body: string, headers: Record<string, string>): Promise<number> {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
  await res.arrayBuffer();
  return res.status;
}

/** Headers signing `body` as message `id` at `at` with `key` (a whsec_ secret). */
function signed(key: string, id: string, at: Date, body: string): Record<string, string> {
  return { "webhook-id": id, "webhook-timestamp": String(Math.floor(at.getTime() / 1000)), "webhook-signature": new Webhook(key).sign(id, at, body) };
}

/** The verified events the receiver printed so far. */
const printed = () =>
  receiver
    .stdout()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as { id: string; event: string; data: { item_id: string; name: string } });

it("prints the server's signed delivery once, and acknowledges a repeat without printing it again", async () => {
  const [sales] = await s.client.pipelines.list();
  const [lead] = await s.client.pipelines.stages(sales!.id);
  const item = await s.client.items.create({ name: "Webhook example lead", pipeline_id: sales!.id, stage_id: lead!.id });
  const line = await receiver.line(new RegExp(`"item_id":"${item.item_id}"`), 30_000);
  const event = JSON.parse(line) as { id: string; event: string; data: { item_id: string; name: string } };
  expect(event).toMatchObject({ event: "item.created", data: { item_id: item.item_id, name: "Webhook example lead" } });

  // The server counts the receiver's 204 as a success.
  let deliveries = await s.client.webhooks.deliveries(subscriptionId, {});
  for (let tries = 0; deliveries.data[0]?.state !== "succeeded" && tries < 50; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    deliveries = await s.client.webhooks.deliveries(subscriptionId, {});
  }
  expect(deliveries.data.map((d) => [d.event, d.state])).toEqual([["item.created", "succeeded"]]);

  // At least once: the same message again is acknowledged and not printed a second time.
  const body = JSON.stringify(event.data);
  const headers = { ...signed(secret, "msg_repeat_test", new Date(), body), "webhook-event": "item.created" };
  expect(await deliver(body, headers)).toBe(204);
  expect(await deliver(body, headers)).toBe(204);
  expect(printed().filter((e) => e.id === "msg_repeat_test")).toHaveLength(1);
}, 60_000);

it("answers 401 to forged, tampered, stale and unsigned deliveries and prints none of them", async () => {
  const body = JSON.stringify({ item_id: "forged", name: "Forged lead" });
  const now = new Date();
  const good = signed(secret, "msg_forged", now, body);
  const otherSecret = `whsec_${Buffer.from("another secret of 24+ bytes!!").toString("base64")}`;
  const cases: [string, string, Record<string, string>][] = [
    ["a signature made with another secret", body, signed(otherSecret, "msg_forged", now, body)],
    ["a made-up signature", body, { ...good, "webhook-signature": `v1,${Buffer.alloc(32, 7).toString("base64")}` }],
    ["a body changed after signing", body.replace("Forged", "Changed"), good],
    ["a stale timestamp (10 minutes old)", body, signed(secret, "msg_forged", new Date(now.getTime() - 10 * 60_000), body)],
    ["a timestamp 10 minutes ahead", body, signed(secret, "msg_forged", new Date(now.getTime() + 10 * 60_000), body)],
    ["no signature headers", body, {}],
  ];
  for (const [label, sent, headers] of cases) {
    expect([label, await deliver(sent, headers)]).toEqual([label, 401]);
  }
  expect(printed().filter((e) => e.data.item_id === "forged")).toEqual([]);
});
