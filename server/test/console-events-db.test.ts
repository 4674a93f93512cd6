/**
 * The reads of the console's event page go through indexes (issue 40 item 4: "1,000,000 deliveries must not make the
 * page slow"): an event's deliveries through `webhook_deliveries (event_id)`, their newest attempts through
 * `webhook_attempts (delivery_id, attempted_at desc)`, the time range's seq bounds through `webhook_events
 * (company_id, created_at)`. Checked as oauth-client-index.test.ts checks its index: the planner's choice (EXPLAIN,
 * after ANALYZE) on tables crowded with 40,000 deliveries of 1,000 events to 40 endpoints and their attempts, and the statements' results
 * there (pages of deliveries, attempts per delivery). On PGlite and PostgreSQL alike. The figures at 1,000,000
 * deliveries are in docs/console-and-security.md.
 */
import { SEQ_WINDOW_SQL } from "../src/db/events-feed";
import { EVENT_DELIVERIES_SQL, listEventDeliveries, listRecentAttempts } from "../src/db/webhook-deliveries-log";
import { startTestServer, type TestServer } from "./helpers/test-server";

const EVENTS = 1000;
const ENDPOINTS = 40;

let t: TestServer;
let eventIds: string[];
const sql = () => t.server.ctx.db.sql;

beforeAll(async () => {
  t = await startTestServer();
  await sql().query(
    `INSERT INTO webhook_subscriptions (id, company_id, target_url, events, origin, secret)
     SELECT 'crowd-sub-' || lpad(g::text, 3, '0'), $1, 'http://127.0.0.1:9/crowd-' || g, ARRAY['item.created'], 'console', 'whsec_x'
     FROM generate_series(1, $2::int) g`,
    [t.companyId, ENDPOINTS],
  );
  await sql().query(
    `INSERT INTO webhook_events (id, company_id, type, resource_id, payload, created_at)
     SELECT 'crowd-event-' || lpad(g::text, 5, '0'), $1, 'item.created', 'crowd-item-' || g, '{"item_id": "x"}'::json,
       now() - interval '1 day' + g * interval '1 second'
     FROM generate_series(1, $2::int) g`,
    [t.companyId, EVENTS],
  );
  await sql().query(
    `INSERT INTO webhook_deliveries (id, event_id, subscription_id, seq, state, attempt_count, last_status, created_at, completed_at)
     SELECT 'crowd-delivery-' || e.id || '-' || s.id, e.id, s.id, e.seq, 'succeeded', 1, 200, e.created_at, e.created_at
     FROM webhook_events e CROSS JOIN webhook_subscriptions s
     WHERE e.company_id = $1 AND e.id LIKE 'crowd-event-%' AND s.id LIKE 'crowd-sub-%'`,
    [t.companyId],
  );
  // One attempt for every delivery (the crowd), and three newer ones each for the deliveries of one event.
  await sql().query(
    `INSERT INTO webhook_attempts (id, delivery_id, attempted_at, response_status, duration_ms)
     SELECT d.id || '-attempt-0', d.id, d.created_at, 200, 5 FROM webhook_deliveries d WHERE d.id LIKE 'crowd-delivery-%'`,
  );
  await sql().query(
    `INSERT INTO webhook_attempts (id, delivery_id, attempted_at, response_status, duration_ms)
     SELECT d.id || '-attempt-' || n, d.id, d.created_at + n * interval '1 minute', CASE WHEN n = 3 THEN 200 ELSE 500 END, 10 * n
     FROM webhook_deliveries d CROSS JOIN generate_series(1, 3) n WHERE d.event_id = 'crowd-event-00500'`,
  );
  for (const table of ["webhook_subscriptions", "webhook_events", "webhook_deliveries", "webhook_attempts"]) await sql().query(`ANALYZE ${table}`);
  eventIds = (await sql().query<{ id: string }>(`SELECT id FROM webhook_events WHERE id LIKE 'crowd-event-%' ORDER BY seq`)).map((r) => r.id);
}, 120_000);
afterAll(() => t?.close());

/** The planner's plan of `statement` (EXPLAIN without ANALYZE: nothing runs), as JSON text. */
async function planOf(statement: string, params: unknown[]): Promise<string> {
  return JSON.stringify(await sql().query(`EXPLAIN (FORMAT JSON) ${statement}`, params));
}

describe("an event's deliveries", () => {
  it("are read through the index on event_id, never by scanning the deliveries table", async () => {
    const plan = await planOf(EVENT_DELIVERIES_SQL, ["crowd-event-00500", t.companyId, null, 51]);
    expect(plan).toContain("webhook_deliveries_event_id_idx");
    expect(plan).not.toMatch(/"Node Type":"Seq Scan","Parallel Aware":(true|false),"Async Capable":(true|false),"Relation Name":"webhook_deliveries"/);
    expect(plan).not.toMatch(/"Seq Scan"[^}]*"Relation Name":"webhook_deliveries"/);
  });

  it("come one per endpoint, in pages, only the company's", async () => {
    const event = eventIds[499]!;
    const first = await listEventDeliveries(t.server.ctx.prisma, t.companyId, event, null, 25);
    expect(first).toHaveLength(25);
    const rest = await listEventDeliveries(t.server.ctx.prisma, t.companyId, event, first.at(-1)!.id, 25);
    expect(rest).toHaveLength(ENDPOINTS - 25);
    expect(new Set([...first, ...rest].map((d) => d.subscriptionId)).size).toBe(ENDPOINTS);
    expect([...first, ...rest].every((d) => d.state === "succeeded" && d.lastStatus === 200)).toBe(true);
    const other = await t.newCompany("Other Co");
    expect(await listEventDeliveries(t.server.ctx.prisma, other.companyId, event, null, 25)).toEqual([]);
  });
});

describe("their newest attempts", () => {
  it("are read per delivery through the index on (delivery_id, attempted_at desc), newest first, at most N each", async () => {
    const plan = await planOf(
      `SELECT a.id FROM unnest($1::text[]) AS d(id) CROSS JOIN LATERAL (
         SELECT x.id FROM webhook_attempts x WHERE x.delivery_id = d.id ORDER BY x.attempted_at DESC, x.id DESC LIMIT $2::int) a`,
      [["x"], 10],
    );
    expect(plan).toContain("webhook_attempts_delivery_id_attempted_at_idx");
    const deliveries = await listEventDeliveries(t.server.ctx.prisma, t.companyId, "crowd-event-00500", null, 2);
    const attempts = await listRecentAttempts(t.server.ctx.prisma, deliveries.map((d) => d.id), 2);
    expect(attempts.map((a) => [a.deliveryId, a.responseStatus, a.durationMs])).toEqual(
      deliveries.flatMap((d) => [
        [d.id, 200, 30],
        [d.id, 500, 20],
      ]),
    );
  });
});

describe("a time range's seq bounds", () => {
  it("are found through the index on (company_id, created_at), whatever the time", async () => {
    // Other companies' events, newer than all of this company's: a walk of the (created_at) index would read them all.
    const other = await t.newCompany("Busy Co");
    await sql().query(
      `INSERT INTO webhook_events (id, company_id, type, resource_id, payload, created_at)
       SELECT 'busy-event-' || g, $1, 'item.created', 'busy-item-' || g, '{}'::json, now() - interval '1 hour' + g * interval '1 millisecond'
       FROM generate_series(1, 20000) g`,
      [other.companyId],
    );
    await sql().query("ANALYZE webhook_events");
    for (const at of [new Date(Date.now() - 12 * 3_600_000), new Date(Date.now() - 30 * 60_000), new Date()]) {
      for (const statement of [SEQ_WINDOW_SQL.from, SEQ_WINDOW_SQL.to]) {
        expect(await planOf(statement, [t.companyId, at])).toContain("webhook_events_company_id_created_at_idx");
      }
    }
  });
});
