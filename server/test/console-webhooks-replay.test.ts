/**
 * "Replay failed deliveries since..." on the console's webhook endpoint page (issue 31 item 3, CONTRACT "Events
 * feed": the API's replay, the same service), over HTTP: owners and admins give a Since (and an optional Until) time
 * in UTC; the failed deliveries of that range go out again with their webhook-id, a notice gives the count, the
 * audit log records the range and the count; REST hooks made through the API replay too; a form that cannot be read
 * is shown again with its errors beside the labelled inputs (400, nothing queued); members see no form and are 403;
 * CSRF; another company's endpoint is 404; a disabled endpoint says so. The browser walk-through of the page (axe-core)
 * is console-webhooks.test.ts.
 */
import { adminAndMemberOverHttp, createItemOverApi, signInOverHttp, type ConsoleHttp, type ConsoleUser } from "./helpers/console-browser";
import { startReceiver, type Receiver } from "./helpers/receiver";
import { startTestServerWithRateLimit, type TestServer } from "./helpers/test-server";

let t: TestServer;
let rx: Receiver;
let admin: ConsoleHttp;
let member: ConsoleHttp;
let adminUser: ConsoleUser;

const form = (fields: Record<string, string>) => new URLSearchParams(fields);
/** A time as a `datetime-local` input posts it: `YYYY-MM-DDTHH:MM`, here in UTC as the console asks. */
const localUtc = (d: Date) => d.toISOString().slice(0, 16);
/** Receiver paths that answer 400 (a failed delivery, not retried) while listed. */
const failing = new Set<string>();

/** Adds a console endpoint for item.created at the receiver's `path` as the admin; returns its id. */
async function addEndpoint(path: string): Promise<string> {
  const res = await admin.post("/console/webhooks", form({ target_url: `${rx.url}${path}`, description: "Replay test", events: "item.created" }), "/console/webhooks/new");
  expect(res.status).toBe(303);
  return decodeURIComponent(/\/console\/webhooks\/([^/?#]+)$/.exec(res.location!)![1]!);
}

const deliveries = (subscriptionId: string) =>
  t.server.ctx.prisma.webhookDelivery.findMany({ where: { subscriptionId }, orderBy: { seq: "asc" }, select: { eventId: true, state: true } });

/** Waits until the subscription's deliveries (oldest first) satisfy `done`; returns them. */
async function waitForDeliveriesThat(subscriptionId: string, done: (rows: { eventId: string; state: string }[]) => boolean, what: string) {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const rows = await deliveries(subscriptionId);
    if (done(rows)) return rows;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; have ${JSON.stringify(rows)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Waits until the subscription has `count` deliveries, all in `state`. */
const waitForDeliveries = (subscriptionId: string, count: number, state: string) =>
  waitForDeliveriesThat(subscriptionId, (rows) => rows.length === count && rows.every((r) => r.state === state), `${count} ${state} deliveries`);

const replayAudit = (subscriptionId: string) =>
  t.server.ctx.prisma.auditEvent.findMany({ where: { targetId: subscriptionId, action: "webhook_endpoint.deliveries_replayed" }, orderBy: { createdAt: "asc" } });

beforeAll(async () => {
  t = await startTestServerWithRateLimit(1000);
  rx = await startReceiver({ responder: (req) => (failing.has(req.path) ? { status: 400 } : undefined) });
  ({ adminUser, admin, member } = await adminAndMemberOverHttp(t));
}, 60_000);
afterAll(async () => {
  await rx?.close();
  await t?.close();
});

it("an admin replays the failed deliveries since a time: sent again with their webhook-id, the count in a notice, an audit entry", async () => {
  const id = await addEndpoint("/replay-console");
  const page = (await admin.get(`/console/webhooks/${id}`)).text;
  expect(page).toContain('<h2 id="replay">Replay failed deliveries</h2>');
  expect(page).toMatch(/<label for="replay-since">Since \(UTC\)<\/label>/);
  expect(page).toMatch(/<label for="replay-until">Until \(UTC, optional\)<\/label>/);
  expect(page).toMatch(/<input id="replay-since" name="since" type="datetime-local"/);
  expect(page).toContain('action="/console/webhooks/' + id + '/replay"');

  const since = localUtc(new Date(Date.now() - 60_000));
  failing.add("/replay-console");
  for (const name of ["Replay A", "Replay B"]) await createItemOverApi(t, name);
  const failed = await waitForDeliveries(id, 2, "failed");
  failing.delete("/replay-console");

  const res = await admin.post(`/console/webhooks/${id}/replay`, form({ since, until: "" }), `/console/webhooks/${id}`);
  expect(res.status).toBe(303);
  expect(res.location).toBe(`/console/webhooks/${id}#deliveries`);
  expect((await admin.get(`/console/webhooks/${id}`)).text).toContain("2 failed deliveries queued to be sent again, oldest first, each with its original webhook-id.");
  await rx.waitFor(() => rx.accepted("/replay-console").length === 2, "the two replayed deliveries");
  expect(rx.accepted("/replay-console").map((r) => r.headers["webhook-id"])).toEqual(failed.map((d) => d.eventId));
  await waitForDeliveries(id, 2, "succeeded");

  const [entry] = await replayAudit(id);
  expect(entry).toMatchObject({ actorType: "user", actorId: adminUser.id, targetLabel: `${rx.url}/replay-console` });
  expect(entry!.details).toEqual({ since: `${since}:00Z`, until: null, only_failed: true, count: 2 });
  expect((await admin.get("/console/audit")).text).toContain("Webhook deliveries replayed");

  // Nothing failed is left; a range that ends before the deliveries replays nothing either. Each is still recorded.
  await admin.post(`/console/webhooks/${id}/replay`, form({ since }), `/console/webhooks/${id}`);
  expect((await admin.get(`/console/webhooks/${id}`)).text).toContain("No failed deliveries in that time range: nothing was replayed.");
  failing.add("/replay-console");
  await createItemOverApi(t, "Replay C");
  await waitForDeliveriesThat(id, (rows) => rows.length === 3 && rows[2]!.state === "failed", "the third delivery failed");
  failing.delete("/replay-console");
  await admin.post(`/console/webhooks/${id}/replay`, form({ since: "2020-01-01 00:00", until: "2020-01-02T00:00" }), `/console/webhooks/${id}`);
  expect((await replayAudit(id)).map((e) => (e.details as { count: number }).count)).toEqual([2, 0, 0]);
  expect((await deliveries(id)).filter((d) => d.state === "failed")).toHaveLength(1);
});

it("a REST hook made through the API is replayed from the console too", async () => {
  failing.add("/replay-hook");
  const sub = await t.request("POST", "/v1/ext/webhooks", { target_url: `${rx.url}/replay-hook`, event: "item.created" });
  expect(sub.status).toBe(201);
  const id = sub.body.id as string;
  const since = localUtc(new Date(Date.now() - 60_000));
  await createItemOverApi(t, "Hooked replay");
  const [failed] = await waitForDeliveries(id, 1, "failed");
  failing.delete("/replay-hook");
  const res = await admin.post(`/console/webhooks/${id}/replay`, form({ since, until: localUtc(new Date(Date.now() + 120_000)) }), `/console/webhooks/${id}`);
  expect(res.status).toBe(303);
  expect((await admin.get(`/console/webhooks/${id}`)).text).toContain("1 failed delivery queued to be sent again");
  await rx.waitFor(() => rx.accepted("/replay-hook").length === 1, "the replayed delivery");
  expect(rx.accepted("/replay-hook")[0]!.headers["webhook-id"]).toBe(failed!.eventId);
});

it("a form without Since, with an unreadable time, or with Until before Since is shown again with its errors (400)", async () => {
  const id = await addEndpoint("/replay-errors");
  const cases: [Record<string, string>, string, RegExp][] = [
    [{ since: "", until: "" }, "replay-since", /Enter the date and time to replay from \(UTC\)\./],
    [{ since: "yesterday", until: "" }, "replay-since", /Enter Since as a date and time in UTC, e\.g\. 2026-11-20 09:00\./],
    [{ since: "2026-11-20T09:00", until: "soon" }, "replay-until", /Enter Until as a date and time in UTC/],
    [{ since: "2026-11-20T09:00", until: "2026-11-20T08:00" }, "replay-until", /Until must be later than Since\./],
  ];
  for (const [fields, field, message] of cases) {
    const res = await admin.post(`/console/webhooks/${id}/replay`, form(fields), `/console/webhooks/${id}`);
    expect(res.status).toBe(400);
    expect(res.text).toContain("There is a problem");
    expect(res.text).toContain(`<a href="#${field}">`);
    expect(res.text).toMatch(message);
    expect(res.text).toMatch(new RegExp(`<p id="${field}-error" class="field-error">`));
    expect(res.text).toMatch(new RegExp(`id="${field}"[^>]*aria-invalid="true"`));
    // What was typed is kept.
    if (fields.since) expect(res.text).toContain(`value="${fields.since}"`);
  }
  expect(await replayAudit(id)).toEqual([]);
});

it("members see no replay form and are 403; a POST without CSRF is 403; another company's endpoint is 404; a disabled one says so", async () => {
  const id = await addEndpoint("/replay-access");
  const since = localUtc(new Date(Date.now() - 60_000));
  const page = await member.get(`/console/webhooks/${id}`);
  expect(page.status).toBe(200);
  expect(page.text).not.toContain("Replay failed deliveries");
  expect((await member.post(`/console/webhooks/${id}/replay`, form({ since }), `/console/webhooks/${id}`)).status).toBe(403);

  const { cookie } = await signInOverHttp(t.url, adminUser.email, adminUser.password);
  const forged = await fetch(`${t.url}/console/webhooks/${id}/replay`, {
    method: "POST",
    body: form({ since, _csrf: "forged-token" }),
    redirect: "manual",
    headers: { cookie: cookie!, origin: t.url, "content-type": "application/x-www-form-urlencoded" },
  });
  expect(forged.status).toBe(403);
  expect(await replayAudit(id)).toEqual([]);

  const other = await t.newCompany("Replay Other Co");
  const theirs = await t.request("POST", "/v1/ext/webhooks", { target_url: `${rx.url}/theirs`, event: "item.created" }, other.apiKey);
  expect(theirs.status).toBe(201);
  expect((await admin.post(`/console/webhooks/${theirs.body.id}/replay`, form({ since }), `/console/webhooks/${id}`)).status).toBe(404);
  expect((await admin.post(`/console/webhooks/${theirs.body.id}/replay`, form({ since: "" }), `/console/webhooks/${id}`)).status).toBe(404);
  expect(await replayAudit(theirs.body.id)).toEqual([]);

  await t.server.ctx.prisma.webhookSubscription.update({ where: { id }, data: { disabledAt: new Date(), disabledReason: "failing for 3 days" } });
  const disabled = await admin.post(`/console/webhooks/${id}/replay`, form({ since }), `/console/webhooks/${id}`);
  expect(disabled.status).toBe(303);
  expect((await admin.get(`/console/webhooks/${id}`)).text).toMatch(/was disabled at .* and sends nothing more/);
  expect(await replayAudit(id)).toEqual([]);
});
