/**
 * Deliveries per hour for the console's charts (issue 40 item 6, CONTRACT "Console: events, activity and charts"):
 * an endpoint's over 24 hours or 7 days, and a company's over 24 hours, by outcome with latency p50 / p95, read from
 * the delivery log (db/delivery-charts.ts). Always scoped to the caller's company: another company's endpoint is 404.
 */
import type { AppContext } from "../context";
import { deliveriesPerHour, type DeliveryHourRow } from "../db/delivery-charts";
import { getEndpoint } from "./webhook-endpoints";

export type { DeliveryHourRow } from "../db/delivery-charts";

/** The windows an endpoint's page offers, in hours. */
export const CHART_WINDOWS = { "24h": 24, "7d": 168 } as const;
export type ChartWindow = keyof typeof CHART_WINDOWS;

const HOUR_MS = 3_600_000;

/** An hourly chart's rows with its window: `hours` UTC hours, the last one starting at `lastHour` (the current hour). */
export interface DeliveryChartData {
  lastHour: Date;
  hours: number;
  rows: DeliveryHourRow[];
}

/** The start of the current UTC hour. */
function currentHour(now: Date): Date {
  return new Date(Math.floor(now.getTime() / HOUR_MS) * HOUR_MS);
}

/**
 * The endpoint's deliveries per hour over `window`, up to and including the current hour.
 * @throws DomainError 404 `not_found` when the endpoint is not one of the company's.
 */
export async function endpointDeliveryChart(ctx: AppContext, companyId: string, endpointId: string, window: ChartWindow, now = new Date()): Promise<DeliveryChartData> {
  await getEndpoint(ctx, companyId, endpointId);
  const lastHour = currentHour(now);
  const hours = CHART_WINDOWS[window];
  return { lastHour, hours, rows: await deliveriesPerHour(ctx.prisma, { companyId, subscriptionId: endpointId }, lastHour, hours) };
}

/** The company's deliveries (every endpoint and REST hook) per hour over the last 24 hours, the current hour included. */
export async function companyDeliveryChart(ctx: AppContext, companyId: string, now = new Date()): Promise<DeliveryChartData> {
  const lastHour = currentHour(now);
  return { lastHour, hours: 24, rows: await deliveriesPerHour(ctx.prisma, { companyId }, lastHour, 24) };
}
