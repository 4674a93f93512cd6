/**
 * One chart as a page shows it (docs/charts.md): the SVG, its accessible name, its legend and the table of the same
 * numbers, ready for views/partials/chart.eta. Joins the series (hourly-series.ts), the renderer (svg-chart.ts) and
 * the table (chart-table.ts); a new chart (requests per hour by status class, ...) needs only its series specs.
 */
import { chartTable, type ChartTable } from "./chart-table";
import type { HourlySeries } from "./hourly-series";
import { linesSvg, stackedBarsSvg, type ChartStyle } from "./svg-chart";

/** What views/partials/chart.eta renders. */
export interface ChartView {
  /** Unique on the page: the figure's heading id is `${id}-title`. */
  id: string;
  /** Heading and accessible name. */
  name: string;
  /** The `<svg>` markup (printed raw: rendered here from numbers and the fixed texts of the caller, never from input). */
  svg: string;
  /** Series' names and colours, in order (the legend, also in the table's columns). */
  legend: { label: string; color: string }[];
  table: ChartTable;
}

/** How to draw: `bars` stacks the series per hour (counts), `lines` draws one line per series (measures). */
export type ChartKind = "bars" | "lines";

/**
 * The chart of `data`.
 * @param unit appended to the table's numbers (e.g. " ms").
 */
export async function chartView(id: string, data: HourlySeries, kind: ChartKind, style: ChartStyle, unit = ""): Promise<ChartView> {
  const svg = kind === "bars" ? await stackedBarsSvg(data, style) : await linesSvg(data, style);
  return {
    id,
    name: style.name,
    svg,
    legend: data.series.map((s) => ({ label: s.label, color: style.colors[s.key] ?? "#505a5f" })),
    table: chartTable(data, `${style.name}: the numbers of the chart`, unit),
  };
}
