/**
 * Deliveries per hour for the console's charts (issue 40 item 6; db/delivery-charts.ts, services/delivery-charts.ts,
 * the endpoint page's charts): UTC hour buckets whatever the session's TimeZone, empty hours as zero, the outcome
 * split and latency percentiles, company isolation, and the page's SVG (accessible name, no inline style) with the
 * table of the same numbers. Deliveries are written with SQL at chosen times into paused endpoints (never sent).
 */
import crypto from "node:crypto";
import { deliveriesPerHour } from "../src/db/delivery-charts";
import { sqlOf } from "../src/db/sql";
import { CLI_ACTOR } from "../src/services/audit-log";
import { companyDeliveryChart, endpointDeliveryChart } from "../src/services/delivery-charts";
import { EndpointInputSchema, createEndpoint, setEndpointPaused } from "../src/services/webhook-endpoints";
import { consoleOverHttp, createConsoleUser } from "./helpers/console-browser";
import { startTestServer, type TestServer } from "./helpers/test-server";

let t: TestServer;
let seq = 0;

/** A paused console endpoint of `companyId` (nothing is ever sent to it). */
async function pausedEndpoint(companyId: string): Promise<string> {
  const by = { companyId, actor: CLI_ACTOR };
  const endpoint = await createEndpoint(t.server.ctx, by, EndpointInputSchema.parse({ target_url: "http://127.0.0.1:9/hook", events: ["item.created"] }));
  await setEndpointPaused(t.server.ctx, by, endpoint.id, true);
  return endpoint.id;
}

/** Writes a delivery of `subscriptionId` created at `createdAt`, in `state`, whose latest attempt took `ms` (null: none yet). */
async function delivery(companyId: string, subscriptionId: string, createdAt: string | Date, state: "succeeded" | "failed" | "pending", ms: number | null) {
  const eventId = crypto.randomUUID();
  const q = sqlOf(t.server.ctx.prisma);
  await q.query(`INSERT INTO webhook_events (id, company_id, type, resource_id, payload, created_at) VALUES ($1, $2, 'item.created', 'x', '{}'::json, $3::timestamptz)`, [eventId, companyId, new Date(createdAt)]);
  await q.query(
    `INSERT INTO webhook_deliveries (id, event_id, subscription_id, seq, state, attempt_count, last_duration_ms, created_at, next_attempt_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8::timestamptz, $8::timestamptz)`,
    [crypto.randomUUID(), eventId, subscriptionId, ++seq, state, ms === null ? 0 : 1, ms, new Date(createdAt)],
  );
}

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t?.close());

describe("deliveries per hour (data layer)", () => {
  it("buckets by UTC hour even when the session's TimeZone is half an hour off, with every hour present and empty ones zero", async () => {
    const sub = await pausedEndpoint(t.companyId);
    await delivery(t.companyId, sub, "2026-12-07T10:10:00Z", "succeeded", 10); // 15:40 in Kolkata
    await delivery(t.companyId, sub, "2026-12-07T10:50:00Z", "succeeded", 20); // 16:20 in Kolkata: another local hour
    await delivery(t.companyId, sub, "2026-12-07T09:59:59.999Z", "failed", 500);
    await delivery(t.companyId, sub, "2026-12-07T11:00:00Z", "succeeded", 1); // after the window
    await delivery(t.companyId, sub, "2026-12-06T10:59:59.999Z", "succeeded", 1); // before it
    const rows = await sqlOf(t.server.ctx.prisma).transaction(async (q) => {
      await q("SET LOCAL TimeZone = 'Asia/Kolkata'");
      return deliveriesPerHour(q, { companyId: t.companyId, subscriptionId: sub }, new Date("2026-12-07T10:00:00Z"), 24);
    });
    expect(rows).toHaveLength(24);
    expect(rows[0]!.hour.toISOString()).toBe("2026-12-06T11:00:00.000Z");
    expect(rows[23]).toEqual({ hour: new Date("2026-12-07T10:00:00Z"), delivered: 2, failed: 0, pending: 0, p50Ms: 10, p95Ms: 20 });
    expect(rows[22]).toEqual({ hour: new Date("2026-12-07T09:00:00Z"), delivered: 0, failed: 1, pending: 0, p50Ms: 500, p95Ms: 500 });
    for (const row of rows.slice(0, 22)) expect(row).toEqual({ hour: row.hour, delivered: 0, failed: 0, pending: 0, p50Ms: null, p95Ms: null });
  });

  it("splits an hour by outcome and takes latency percentiles over the attempted deliveries only", async () => {
    const sub = await pausedEndpoint(t.companyId);
    const hour = "2026-12-01T05:";
    for (const [i, ms] of [30, 10, 1000, 40, 20].entries()) await delivery(t.companyId, sub, `${hour}0${i}:00Z`, i === 2 ? "failed" : "succeeded", ms);
    await delivery(t.companyId, sub, `${hour}30:00Z`, "pending", null); // queued, never tried
    await delivery(t.companyId, sub, `${hour}31:00Z`, "pending", 15); // waiting for a retry
    const [row] = await deliveriesPerHour(t.server.ctx.prisma, { companyId: t.companyId, subscriptionId: sub }, new Date(`${hour}00:00Z`), 1);
    // durations 10, 15, 20, 30, 40, 1000: nearest-rank median is the 3rd (20), p95 the 6th (1000)
    expect(row).toEqual({ hour: new Date(`${hour}00:00Z`), delivered: 4, failed: 1, pending: 2, p50Ms: 20, p95Ms: 1000 });
  });

  it("refuses a window that is not whole UTC hours or is too long", async () => {
    const db = t.server.ctx.prisma;
    await expect(deliveriesPerHour(db, { companyId: t.companyId }, new Date("2026-12-01T05:30:00Z"), 24)).rejects.toThrow(RangeError);
    await expect(deliveriesPerHour(db, { companyId: t.companyId }, new Date("2026-12-01T05:00:00Z"), 24 * 31 + 1)).rejects.toThrow(RangeError);
  });
});

describe("company isolation", () => {
  it("never counts another company's deliveries, and another company's endpoint is 404", async () => {
    const other = await t.newCompany("Chart Other Co");
    const mine = await pausedEndpoint(t.companyId);
    const theirs = await pausedEndpoint(other.companyId);
    const now = new Date();
    await delivery(other.companyId, theirs, now, "succeeded", 5);
    await delivery(other.companyId, theirs, now, "failed", 5);
    await delivery(t.companyId, mine, now, "pending", null);
    const lastHour = new Date(Math.floor(now.getTime() / 3_600_000) * 3_600_000);
    // B's endpoint id asked for with A's company reads as zeros (the statement checks the company itself) ...
    const [crossed] = await deliveriesPerHour(t.server.ctx.prisma, { companyId: t.companyId, subscriptionId: theirs }, lastHour, 1);
    expect([crossed!.delivered, crossed!.failed, crossed!.pending]).toEqual([0, 0, 0]);
    // ... and the service answers 404, as for any unknown endpoint
    await expect(endpointDeliveryChart(t.server.ctx, t.companyId, theirs, "24h", now)).rejects.toMatchObject({ code: "not_found" });
    const ours = await companyDeliveryChart(t.server.ctx, t.companyId, now);
    const theirsChart = await companyDeliveryChart(t.server.ctx, other.companyId, now);
    expect(ours.rows.at(-1)).toMatchObject({ delivered: 0, failed: 0, pending: 1 });
    expect(theirsChart.rows.at(-1)).toMatchObject({ delivered: 1, failed: 1, pending: 0 });
    // the console of company A never shows B's endpoint or its numbers
    const user = await createConsoleUser(t, "member");
    const http = await consoleOverHttp(t.url, user);
    expect((await http.get(`/console/webhooks/${theirs}`)).status).toBe(404);
  });
});

describe("the endpoint page's charts", () => {
  it("draws deliveries and latency as accessible SVG without inline style, with a table of the same numbers, over 24 hours or 7 days", async () => {
    const sub = await pausedEndpoint(t.companyId);
    const now = new Date();
    const hourOf = (d: Date) => new Date(Math.floor(d.getTime() / 3_600_000) * 3_600_000).toISOString().slice(0, 16).replace("T", " ") + " UTC";
    const recent = new Date(now.getTime() - 60_000);
    const threeDaysAgo = new Date(now.getTime() - 72 * 3_600_000);
    for (let i = 0; i < 3; i++) await delivery(t.companyId, sub, recent, "succeeded", 40 + i);
    await delivery(t.companyId, sub, recent, "failed", 900);
    await delivery(t.companyId, sub, threeDaysAgo, "succeeded", 7);
    const user = await createConsoleUser(t, "member");
    const http = await consoleOverHttp(t.url, user);

    const day = await http.get(`/console/webhooks/${sub}`);
    expect(day.status).toBe(200);
    const svgs = day.text.match(/<svg[^>]*class="chart"[^>]*>/g) ?? [];
    expect(svgs).toHaveLength(2);
    expect(svgs[0]).toContain('role="img"');
    expect(svgs[0]).toContain('aria-label="Deliveries per hour, last 24 hours: delivered, failed, pending"');
    expect(svgs[1]).toContain('aria-label="Delivery latency per hour, last 24 hours, p50 and p95"');
    expect(day.text).not.toMatch(/<style|\sstyle="/);
    expect(day.text).not.toMatch(/<g[^>]*aria-label/); // Plot's group labels: prohibited ARIA on a <g> (axe)
    const captions = [...day.text.matchAll(/<caption>([^<]*)<\/caption>/g)].map((m) => m[1]);
    expect(captions).toEqual(expect.arrayContaining(["Deliveries per hour, last 24 hours: delivered, failed, pending: the numbers of the chart"]));
    const rowOf = (html: string, caption: string, hour: string) => {
      const table = html.slice(html.indexOf(`<caption>${caption}`));
      const row = new RegExp(`${hour}</time></th>((?:<td>[^<]*</td>)+)`).exec(table.slice(0, table.indexOf("</table>")));
      return row ? [...row[1]!.matchAll(/<td>([^<]*)<\/td>/g)].map((m) => m[1]) : null;
    };
    const deliveriesCaption = "Deliveries per hour, last 24 hours: delivered, failed, pending";
    expect(rowOf(day.text, deliveriesCaption, hourOf(recent))).toEqual(["3", "1", "0"]);
    expect(rowOf(day.text, deliveriesCaption, hourOf(new Date(now.getTime() - 5 * 3_600_000)))).toEqual(["0", "0", "0"]);
    expect(rowOf(day.text, "Delivery latency per hour, last 24 hours, p50 and p95", hourOf(recent))).toEqual(["41 ms", "900 ms"]);
    expect(rowOf(day.text, deliveriesCaption, hourOf(threeDaysAgo))).toBeNull(); // outside 24 hours

    const week = await http.get(`/console/webhooks/${sub}?window=7d`);
    expect(week.status).toBe(200);
    expect(week.text).toContain('aria-label="Deliveries per hour, last 7 days: delivered, failed, pending"');
    const weekCaption = "Deliveries per hour, last 7 days: delivered, failed, pending";
    expect(rowOf(week.text, weekCaption, hourOf(threeDaysAgo))).toEqual(["1", "0", "0"]);
    const weekTable = week.text.slice(week.text.indexOf(`<caption>${weekCaption}`));
    expect(weekTable.slice(0, weekTable.indexOf("</table>")).match(/<tr><th scope="row">/g)).toHaveLength(168);
  });
});
