/**
 * The console's chart series builder and table (console/charts/hourly-series.ts, chart-table.ts): UTC hours, empty
 * hours as zero for counts and as "None" for measures, rows outside the window ignored.
 */
import { chartTable } from "../src/console/charts/chart-table";
import { hourlySeries, utcHourOf } from "../src/console/charts/hourly-series";

const at = (iso: string) => new Date(iso);
const specs = [
  { key: "n", label: "Count", value: (r: { hour: Date; n: number; ms: number | null }) => r.n, missing: 0 as const },
  { key: "ms", label: "Latency", value: (r: { hour: Date; n: number; ms: number | null }) => r.ms, missing: null },
];

describe("hourly series", () => {
  it("has one value per UTC hour of the window, oldest first, empty hours as zero or null", () => {
    const rows = [
      { hour: at("2026-12-07T10:00:00Z"), n: 5, ms: 40 },
      { hour: at("2026-12-07T08:00:00Z"), n: 2, ms: null },
      { hour: at("2026-12-07T11:00:00Z"), n: 99, ms: 1 }, // after the window
      { hour: at("2026-12-07T06:00:00Z"), n: 99, ms: 1 }, // before it
    ];
    const data = hourlySeries(rows, { lastHour: at("2026-12-07T10:00:00Z"), hours: 4 }, specs);
    expect(data.hours.map((h) => h.toISOString())).toEqual(["2026-12-07T07:00:00.000Z", "2026-12-07T08:00:00.000Z", "2026-12-07T09:00:00.000Z", "2026-12-07T10:00:00.000Z"]);
    expect(data.series.map((s) => [s.label, s.values])).toEqual([
      ["Count", [0, 2, 0, 5]],
      ["Latency", [null, null, null, 40]],
    ]);
  });

  it("buckets by the UTC hour whatever the offset an instant was written with", () => {
    expect(utcHourOf(at("2026-12-07T15:40:00+05:30")).toISOString()).toBe("2026-12-07T10:00:00.000Z");
    expect(utcHourOf(at("2026-12-07T10:59:59.999Z")).toISOString()).toBe("2026-12-07T10:00:00.000Z");
  });

  it("tables the same numbers, hours in the console's date format", () => {
    const data = hourlySeries([{ hour: at("2026-12-07T10:00:00Z"), n: 1234, ms: 40 }], { lastHour: at("2026-12-07T10:00:00Z"), hours: 2 }, specs);
    expect(chartTable(data, "Caption", " ms")).toEqual({
      caption: "Caption",
      columns: ["Hour starting", "Count", "Latency"],
      rows: [
        { hour: "2026-12-07 09:00 UTC", datetime: "2026-12-07T09:00:00.000Z", cells: ["0 ms", "None"] },
        { hour: "2026-12-07 10:00 UTC", datetime: "2026-12-07T10:00:00.000Z", cells: ["1,234 ms", "40 ms"] },
      ],
    });
  });
});
