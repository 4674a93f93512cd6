/**
 * The webhook delivery charts (CONTRACT "Console: events, activity and charts"): deliveries per hour by outcome
 * and latency p50 / p95 per hour, from the rows of services/delivery-charts.ts. Used by an endpoint's page (24 hours
 * or 7 days) and by the console's home (the company's deliveries over 24 hours).
 */
import type { DeliveryHourRow } from "../../services/delivery-charts";
import { chartView, type ChartView } from "./chart-view";
import { hourlySeries, type HourWindow, type SeriesSpec } from "./hourly-series";

/** Outcome colours: the console's green, red and grey (each 4.5:1 or more against white). */
export const OUTCOME_COLORS = { delivered: "#00703c", failed: "#d4351c", pending: "#505a5f" };

const OUTCOME_SERIES: SeriesSpec<DeliveryHourRow>[] = [
  { key: "delivered", label: "Delivered", value: (r) => r.delivered, missing: 0 },
  { key: "failed", label: "Failed", value: (r) => r.failed, missing: 0 },
  { key: "pending", label: "Pending", value: (r) => r.pending, missing: 0 },
];

const LATENCY_SERIES: SeriesSpec<DeliveryHourRow>[] = [
  { key: "p50", label: "p50 (median)", value: (r) => r.p50Ms, missing: null },
  { key: "p95", label: "p95", value: (r) => r.p95Ms, missing: null },
];

/** Words for a window: "last 24 hours", "last 7 days". */
export function windowWords(window: HourWindow): string {
  return window.hours % 24 === 0 && window.hours > 24 ? `last ${window.hours / 24} days` : `last ${window.hours} hours`;
}

/** Deliveries per hour by outcome, stacked bars. `idPrefix` keeps ids unique on a page; `whose` starts the name. */
export function deliveriesChart(rows: readonly DeliveryHourRow[], window: HourWindow, idPrefix: string, whose = "Deliveries"): Promise<ChartView> {
  return chartView(`${idPrefix}-deliveries`, hourlySeries(rows, window, OUTCOME_SERIES), "bars", {
    name: `${whose} per hour, ${windowWords(window)}: delivered, failed, pending`,
    colors: OUTCOME_COLORS,
    yLabel: "Deliveries",
  });
}

/** Latency p50 and p95 per hour (the latest attempt of each delivery created in the hour), lines. */
export function latencyChart(rows: readonly DeliveryHourRow[], window: HourWindow, idPrefix: string): Promise<ChartView> {
  return chartView(
    `${idPrefix}-latency`,
    hourlySeries(rows, window, LATENCY_SERIES),
    "lines",
    { name: `Delivery latency per hour, ${windowWords(window)}, p50 and p95`, colors: { p50: "#1d70b8", p95: "#912b88" }, yLabel: "Latency (ms)" },
    " ms",
  );
}
