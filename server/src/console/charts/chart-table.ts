/**
 * The table beside every chart (docs/charts.md): the same numbers as the picture, one row per hour, for screen
 * readers and for anyone who would rather read than look. Plain data for views/partials/chart.eta; no HTML here.
 */
import type { HourlySeries } from "./hourly-series";

/** A chart's table: its caption, column headings (the first is the hour) and rows of cell texts. */
export interface ChartTable {
  caption: string;
  columns: string[];
  rows: { hour: string; datetime: string; cells: string[] }[];
}

/** The console's date format, `YYYY-MM-DD HH:mm UTC` (CONTRACT "Console: events, activity and charts"). */
export function utcMinute(at: Date): string {
  return `${at.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/**
 * The table of `data`: a row per hour (labelled with the hour's start), a column per series; a null value reads as
 * "None" (e.g. no latency in an hour without attempts), numbers with thousands separators and `unit` when given.
 */
export function chartTable(data: HourlySeries, caption: string, unit = ""): ChartTable {
  return {
    caption,
    columns: ["Hour starting", ...data.series.map((s) => s.label)],
    rows: data.hours.map((hour, i) => ({
      hour: utcMinute(hour),
      datetime: hour.toISOString(),
      cells: data.series.map((s) => {
        const value = s.values[i];
        return value === null || value === undefined ? "None" : `${value.toLocaleString("en-US")}${unit}`;
      }),
    })),
  };
}
