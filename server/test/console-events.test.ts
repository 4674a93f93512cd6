/**
 * The console's Developers part, Events (CONTRACT "Console: events, activity and charts"), over HTTP: the menu's
 * Developers group; the company's events newest first with the feed's filters (event, item, time range) and keyset
 * pages; an event's page with its body (escaped; or that it was erased) and every delivery of it to each endpoint
 * with attempts, status, latency and next try; "Resend" for owners and admins only (members see no button and are
 * 403; CSRF); another company's event or delivery is 404 and its events never show; hostile query strings and ids
 * never make a server error. The browser walk-through with axe-core is in console-webhooks.test.ts.
 */
import fc from "fast-check";
import { CLI_ACTOR } from "../src/services/audit-log";
import { EVENTS_PAGE_SIZE } from "../src/services/developer-events";
import { EndpointInputSchema, createEndpoint } from "../src/services/webhook-endpoints";
import { consoleOverHttp, createConsoleUser, createItemOverApi, signInOverHttp, type ConsoleHttp, type ConsoleUser } from "./helpers/console-browser";
import { emitEventsTogether, startReceiver, type Receiver } from "./helpers/receiver";
import { startTestServerWithRateLimit, type TestServer } from "./helpers/test-server";
import { HTML_XSS_PAYLOADS } from "./helpers/xss-payloads";

let t: TestServer;
let rx: Receiver;
let admin: ConsoleHttp;
let adminUser: ConsoleUser;
let member: ConsoleHttp;
/** An admin of another company, and that company. */
let otherAdmin: ConsoleHttp;
let other: Awaited<ReturnType<TestServer["newCompany"]>>;
/** The console endpoints of the main company: one that accepts, one that answers 500. */
let okEndpoint = "";
let downEndpoint = "";

const form = (fields: Record<string, string> = {}) => new URLSearchParams(fields);
const DATE = /\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/;

/** The event ids a list page links to, in page order. */
const eventIdsOf = (html: string) => [...html.matchAll(/<a href="\/console\/events\/([^"?#]+)">/g)].map((m) => m[1]!);

async function addEndpoint(companyId: string, path: string): Promise<string> {
  const input = EndpointInputSchema.parse({ target_url: `${rx.url}${path}`, description: `Endpoint ${path}`, events: ["item.created", "item.updated"] });
  return (await createEndpoint(t.server.ctx, { companyId, actor: CLI_ACTOR }, input)).id;
}

/** The events of the main company about `itemId`, oldest first. */
const eventsOfItem = (itemId: string) =>
  t.server.ctx.prisma.webhookEvent.findMany({ where: { companyId: t.companyId, resourceId: itemId }, orderBy: { seq: "asc" } });

/** Waits until event `eventId`'s delivery to `subscriptionId` satisfies `done`. */
async function waitForDelivery(eventId: string, subscriptionId: string, done: (d: { state: string; attemptCount: number }) => boolean, what: string) {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const d = await t.server.ctx.prisma.webhookDelivery.findFirst({ where: { eventId, subscriptionId } });
    if (d && done(d)) return d;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${d?.state} after ${d?.attemptCount} attempts`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  t = await startTestServerWithRateLimit(10_000);
  rx = await startReceiver({ responder: (req) => (req.path.startsWith("/down") ? { status: 500 } : undefined) });
  adminUser = await createConsoleUser(t, "admin");
  admin = await consoleOverHttp(t.url, adminUser);
  member = await consoleOverHttp(t.url, await createConsoleUser(t, "member"));
  other = await t.newCompany("Other Co");
  otherAdmin = await consoleOverHttp(t.url, await createConsoleUser(t, "admin", other.companyId));
  okEndpoint = await addEndpoint(t.companyId, "/ok");
  downEndpoint = await addEndpoint(t.companyId, "/down");
}, 60_000);
afterAll(async () => {
  await rx?.close();
  await t?.close();
});

describe("the Developers menu", () => {
  it.each([["member", () => member], ["admin", () => admin]])("lists Events under Developers for a %s, marked current on its pages", async (_role, who) => {
    const page = await who().get("/console/events");
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/<span class="nav-group-label" id="nav-developers">Developers<\/span>\s*<ul aria-labelledby="nav-developers">\s*<li><a href="\/console\/events" aria-current="page">Events<\/a><\/li>/);
    expect(page.text).toContain("<h1>Events</h1>");
    const keys = await who().get("/console/keys");
    expect(keys.text).toMatch(/<li><a href="\/console\/events">Events<\/a><\/li>/);
  });
});

describe("the events list", () => {
  it("shows the company's events newest first, with their delivery outcomes and the console's date format", async () => {
    const a = await createItemOverApi(t, "List Alpha");
    const b = await createItemOverApi(t, "List Beta");
    const [eventA] = await eventsOfItem(a.item_id);
    const [eventB] = await eventsOfItem(b.item_id);
    await waitForDelivery(eventB!.id, okEndpoint, (d) => d.state === "succeeded", "B delivered");
    const page = await member.get("/console/events");
    const ids = eventIdsOf(page.text);
    expect(ids.indexOf(eventB!.id)).toBeGreaterThanOrEqual(0);
    expect(ids.indexOf(eventB!.id)).toBeLessThan(ids.indexOf(eventA!.id));
    const row = new RegExp(`<a href="/console/events/${eventB!.id}">item.created[\\s\\S]*?</tr>`).exec(page.text)![0];
    expect(row).toContain(`<code>${b.item_id}</code>`);
    expect(row).toMatch(/1 delivered, 1 pending/);
    expect(row).toMatch(DATE);
  });

  it("filters by event, by item and by both", async () => {
    const item = await createItemOverApi(t, "Filter Gamma");
    expect((await t.request("PATCH", `/v1/ext/items/${item.item_id}`, { name: "Filter Gamma 2" })).status).toBe(200);
    const [created, updated] = await eventsOfItem(item.item_id);
    const byItem = eventIdsOf((await member.get(`/console/events?resource_id=${item.item_id}`)).text);
    expect(byItem).toEqual([updated!.id, created!.id]);
    const both = await member.get(`/console/events?event=item.updated&resource_id=${item.item_id}`);
    expect(eventIdsOf(both.text)).toEqual([updated!.id]);
    expect(both.text).toMatch(/<option value="item.updated" selected>item.updated<\/option>/);
    expect(both.text).toContain(`value="${item.item_id}"`);
    const updates = eventIdsOf((await member.get("/console/events?event=item.updated")).text);
    expect(updates).toContain(updated!.id);
    expect(updates).not.toContain(created!.id);
    const none = await member.get("/console/events?event=task.completed");
    expect(none.text).toContain("No events match these filters.");
  });

  it("filters by a time range in UTC, exactly, also where commit order and occurrence times disagree", async () => {
    const co = await t.newCompany("Timeline Co");
    const reader = await consoleOverHttp(t.url, await createConsoleUser(t, "member", co.companyId));
    const events = await emitEventsTogether(t.server.ctx, co.companyId, 6);
    // Occurrence times as a company's history would have them: ascending with seq, but the 5th started its
    // transaction before the 4th (commit order and occurrence order differ by a transaction's length).
    const times = ["2026-03-01T08:00:00Z", "2026-03-01T09:00:00Z", "2026-03-01T10:00:00Z", "2026-03-01T11:00:00Z", "2026-03-01T10:59:00Z", "2026-03-01T12:00:00Z"];
    for (const [i, e] of events.entries()) {
      await t.server.ctx.prisma.webhookEvent.update({ where: { id: e.id }, data: { createdAt: new Date(times[i]!) } });
    }
    const ids = async (query: string) => {
      const page = await reader.get(`/console/events?${query}`);
      expect(page.status).toBe(200);
      return eventIdsOf(page.text);
    };
    const at = (...indexes: number[]) => indexes.map((i) => events[i]!.id);
    expect(await ids("since=2026-03-01T09:00&until=2026-03-01T11:00")).toEqual(at(4, 2, 1));
    expect(await ids("since=2026-03-01T10:30")).toEqual(at(5, 4, 3));
    expect(await ids("until=2026-03-01T09:00")).toEqual(at(0));
    expect(await ids("since=2026-03-01 11:00&until=2026-03-01 11:01")).toEqual(at(3));
    expect(await ids("since=2026-03-02T00:00")).toEqual([]);
  });

  it("pages with a keyset cursor, 50 a page, carrying the filters", async () => {
    const co = await t.newCompany("Busy Co");
    const reader = await consoleOverHttp(t.url, await createConsoleUser(t, "member", co.companyId));
    const events = await emitEventsTogether(t.server.ctx, co.companyId, EVENTS_PAGE_SIZE + 5);
    const first = await reader.get("/console/events?event=item.created");
    const firstIds = eventIdsOf(first.text);
    expect(firstIds).toEqual(events.slice(5).map((e) => e.id).reverse());
    const next = /<a href="(\/console\/events\?event=item\.created&amp;cursor=[^"#]+)#events" rel="next">Older events<\/a>/.exec(first.text);
    expect(next).not.toBeNull();
    const second = await reader.get(next![1]!.replace(/&amp;/g, "&"));
    expect(eventIdsOf(second.text)).toEqual(events.slice(0, 5).map((e) => e.id).reverse());
    expect(second.text).not.toContain('rel="next"');
    expect(second.text).toContain('<a href="/console/events?event=item.created#events">Newest events</a>');
  });

  it("shows a filter it cannot read again with its errors beside the labelled fields (400)", async () => {
    const page = await member.get("/console/events?event=item.exploded&since=yesterday&until=2026-01-01T00:00&resource_id=");
    expect(page.status).toBe(400);
    expect(page.text).toContain('<a href="#filter-event">Choose an event from the list.</a>');
    expect(page.text).toContain('<a href="#filter-since">Enter From as a date and time in UTC, e.g. 2026-11-20 09:00.</a>');
    expect(page.text).toMatch(/<input id="filter-since" name="since" type="datetime-local" value="yesterday" aria-describedby="filter-since-hint filter-since-error" aria-invalid="true">/);
    const order = await member.get("/console/events?since=2026-01-02T00:00&until=2026-01-01T00:00");
    expect(order.status).toBe(400);
    expect(order.text).toContain('<a href="#filter-until">Before must be later than From.</a>');
    expect((await member.get("/console/events?cursor=not-a-cursor")).status).toBe(400);
  });
});

describe("an event's page", () => {
  it("shows the body escaped and every delivery to each endpoint with attempts, status, latency and next try", async () => {
    // A failing endpoint of its own: the shared one retries earlier events first (delivery order per endpoint).
    const failing = await addEndpoint(t.companyId, "/down-fresh");
    const name = `Deal ${HTML_XSS_PAYLOADS[1]}`;
    const res = await t.request("POST", "/v1/ext/items", { name, pipeline_id: t.pipeline.id, stage_id: t.pipeline.stages[0]!.id });
    expect(res.status).toBe(201);
    const [event] = await eventsOfItem(res.body.item_id);
    await waitForDelivery(event!.id, okEndpoint, (d) => d.state === "succeeded", "delivered");
    await waitForDelivery(event!.id, failing, (d) => d.attemptCount >= 1, "attempted once");
    const page = await member.get(`/console/events/${event!.id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain("<h1>Event item.created</h1>");
    expect(page.text).toContain(`<code>${event!.id}</code>`);
    // Pretty JSON, escaped: the name's markup is text, never markup.
    const pre = /<pre class="code"[^>]*>([\s\S]*?)<\/pre>/.exec(page.text)![1]!;
    expect(pre).toContain(`{\n  &quot;item_id&quot;: &quot;${res.body.item_id}&quot;,\n  &quot;short_id&quot;`);
    expect(pre).toContain("&quot;name&quot;: &quot;Deal \\&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&quot;,");
    expect(pre).not.toContain(HTML_XSS_PAYLOADS[1]!);
    expect(page.text).not.toContain(HTML_XSS_PAYLOADS[1]!);

    const section = (sub: string) => {
      const found = page.text.split("<section ").filter((part) => part.includes(`href="/console/webhooks/${sub}"`));
      expect(found).toHaveLength(1);
      return found[0]!;
    };
    const ok = section(okEndpoint);
    expect(ok).toContain(`To ${rx.url}/ok: Delivered`);
    expect(ok).toMatch(/<td><time datetime="[^"]+">\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC<\/time><\/td>\s*<td>200<\/td>\s*<td>\d+ ms<\/td>\s*<td>None<\/td>/);
    const down = section(failing);
    expect(down).toContain(`To ${rx.url}/down-fresh: Pending`);
    expect(down).toMatch(/<dt>Next try<\/dt><dd><time datetime="[^"]+">\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC<\/time><\/dd>/);
    expect(down).toMatch(/<td>500<\/td>\s*<td>\d+ ms<\/td>\s*<td><time datetime="[^"]+">\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC<\/time><\/td>/);
    // Members read only.
    expect(page.text).not.toMatch(/<button[^>]*>Resend/);
    const adminPage = await admin.get(`/console/events/${event!.id}`);
    expect(adminPage.text.match(/<button type="submit" class="button-secondary">Resend<span class="visually-hidden"> to [^<]+<\/span><\/button>/g)).toHaveLength(3);
  });

  it("lets an admin resend a delivery: it goes out again with the same webhook-id", async () => {
    const item = await createItemOverApi(t, "Resend Delta");
    const [event] = await eventsOfItem(item.item_id);
    const delivery = await waitForDelivery(event!.id, okEndpoint, (d) => d.state === "succeeded", "delivered");
    const received = () => rx.requests.filter((r) => r.path === "/ok" && r.headers["webhook-id"] === event!.id).length;
    expect(received()).toBe(1);
    const path = `/console/events/${event!.id}`;
    const res = await admin.post(`${path}/deliveries/${delivery.id}/resend`, form(), path);
    expect(res).toMatchObject({ status: 303, location: `${path}#delivery-${delivery.id}` });
    await rx.waitFor(() => received() === 2, "the resent delivery");
    expect((await admin.get(path)).text).toContain("Delivery queued to be sent again, with the same webhook-id.");
  });

  it("refuses a member's resend (403) and a resend without the CSRF token (403); nothing is sent", async () => {
    const item = await createItemOverApi(t, "Resend Epsilon");
    const [event] = await eventsOfItem(item.item_id);
    const delivery = await waitForDelivery(event!.id, okEndpoint, (d) => d.state === "succeeded", "delivered");
    const path = `/console/events/${event!.id}`;
    expect((await member.post(`${path}/deliveries/${delivery.id}/resend`, form(), path)).status).toBe(403);
    // An admin's session without the form's CSRF token (a forged cross-site form would have none).
    const session = await signInOverHttp(t.url, adminUser.email, adminUser.password);
    const forged = await fetch(`${t.url}${path}/deliveries/${delivery.id}/resend`, {
      method: "POST",
      headers: { origin: t.url, cookie: session.cookie! },
      body: form({ _csrf: "forged" }),
      redirect: "manual",
    });
    expect(forged.status).toBe(403);
    // Still delivered once, not queued again (a resend would have made it pending at once).
    expect(await t.server.ctx.prisma.webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } })).toMatchObject({ state: "succeeded", attemptCount: 1 });
    expect(rx.requests.filter((r) => r.headers["webhook-id"] === event!.id && r.path === "/ok")).toHaveLength(1);
  });

  it("says the body was erased once its item is deleted, offers no resend and refuses one with a notice", async () => {
    const item = await createItemOverApi(t, "Erased Zeta");
    const [event] = await eventsOfItem(item.item_id);
    const delivery = await waitForDelivery(event!.id, okEndpoint, (d) => d.state === "succeeded", "delivered");
    expect((await t.request("DELETE", `/v1/ext/items/${item.item_id}`)).status).toBe(204);
    const path = `/console/events/${event!.id}`;
    const page = await admin.get(path);
    expect(page.text).toMatch(/<p id="erased" class="notice notice-error">Erased at \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC: .*<code>payload_erased<\/code>/);
    expect(page.text).not.toContain("Erased Zeta");
    expect(page.text).toContain("&quot;erased&quot;: true");
    expect(page.text).not.toMatch(/<button[^>]*>Resend/);
    const list = await admin.get(`/console/events?resource_id=${item.item_id}`);
    expect(list.text).toMatch(new RegExp(`<a href="/console/events/${event!.id}">item.created<span[^>]*>[^<]*</span></a> <span class="status status-erased">erased</span>`));
    const res = await admin.post(`${path}/deliveries/${delivery.id}/resend`, form(), path);
    expect(res.status).toBe(303);
    expect((await admin.get(path)).text).toContain("This delivery cannot be sent again: its item or note was deleted");
  });

  it("is 404 for an unknown event, a delivery of another event, and hostile ids", async () => {
    const item = await createItemOverApi(t, "Eta");
    const [event] = await eventsOfItem(item.item_id);
    const delivery = await waitForDelivery(event!.id, okEndpoint, (d) => d.state === "succeeded", "delivered");
    const otherItem = await createItemOverApi(t, "Theta");
    const [otherEvent] = await eventsOfItem(otherItem.item_id);
    expect((await member.get("/console/events/01900000-0000-7000-8000-000000000000")).status).toBe(404);
    expect((await member.get(`/console/events/${encodeURIComponent("x\u0000y")}`)).status).toBe(404);
    expect((await member.get(`/console/events/${"a".repeat(5000)}`)).status).toBe(404);
    const path = `/console/events/${otherEvent!.id}`;
    expect((await admin.post(`${path}/deliveries/${delivery.id}/resend`, form(), path)).status).toBe(404);
  });
});

describe("company isolation", () => {
  it("never shows one company's events to another: its list, event pages and resends are 404 or empty", async () => {
    const item = await createItemOverApi(t, "Secret Iota");
    const [event] = await eventsOfItem(item.item_id);
    const delivery = await waitForDelivery(event!.id, okEndpoint, (d) => d.state === "succeeded", "delivered");
    await createItemOverApi(t, "Other's own", other.apiKey, other.pipeline);
    const list = await otherAdmin.get("/console/events");
    expect(list.status).toBe(200);
    const theirs = await t.server.ctx.prisma.webhookEvent.findMany({ where: { companyId: other.companyId }, select: { id: true } });
    expect(eventIdsOf(list.text).sort()).toEqual(theirs.map((e) => e.id).sort());
    expect(list.text).not.toContain("Secret Iota");
    for (const query of [`resource_id=${item.item_id}`, "event=item.created"]) {
      const filtered = await otherAdmin.get(`/console/events?${query}`);
      expect(eventIdsOf(filtered.text)).not.toContain(event!.id);
    }
    expect((await otherAdmin.get(`/console/events/${event!.id}`)).status).toBe(404);
    const res = await otherAdmin.post(`/console/events/${event!.id}/deliveries/${delivery.id}/resend`, form(), "/console/events");
    expect(res.status).toBe(404);
    const before = rx.requests.filter((r) => r.headers["webhook-id"] === event!.id).length;
    expect(before).toBe(1);
  });
});

describe("hostile input", () => {
  it("never answers a query string or an id with a server error", async () => {
    const text = fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom("2026-13-45T99:99", "\u0000", "%00", "item.created", "a".repeat(300), "9".repeat(30)));
    await fc.assert(
      fc.asyncProperty(fc.record({ event: text, resource_id: text, since: text, until: text, cursor: text }, { requiredKeys: [] }), text, async (query, id) => {
        const qs = new URLSearchParams(query as Record<string, string>).toString();
        const list = await member.get(`/console/events?${qs}`);
        expect([200, 400]).toContain(list.status);
        const page = await member.get(`/console/events/${encodeURIComponent(id) || "x"}?deliveries=${encodeURIComponent(id)}`);
        expect([200, 404]).toContain(page.status);
      }),
      { numRuns: 150 },
    );
  });
});
