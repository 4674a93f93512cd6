/**
 * The SVG renderer of the console's charts (docs/charts.md): Observable Plot 0.6.17 drawing into a linkedom
 * document on the server, so a page ships the picture as markup and no chart script runs in the browser. Plot is an
 * ES module: loaded once, on the first chart, through `importEsm` (oauth/esm.ts).
 *
 * What this module adds to Plot: the chart's accessible name (`aria-label`, `role="img"`: the numbers themselves are
 * in the table beside it, chart-table.ts), the console's colours, and the removal of the `<style>` element Plot puts
 * in every SVG: the console's Content-Security-Policy (`style-src 'self'`, console/security.ts) refuses inline style,
 * so its rules live in assets/console.css under the class `chart`. Plot writes everything else as presentation
 * attributes (`fill`, `stroke`, ...), which no CSP rule governs.
 *
 * Both libraries are loaded as ES modules (linkedom's CommonJS build requires css-select, which is ESM-only).
 */
import { importEsm } from "../../oauth/esm";
import type { HourlySeries } from "./hourly-series";

/** The part of Plot's element this module uses. */
interface PlotElement {
  outerHTML: string;
  setAttribute(name: string, value: string): void;
  querySelector(selector: string): { remove(): void } | null;
  querySelectorAll(selector: string): Iterable<{ removeAttribute(name: string): void }>;
}

/** The part of `@observablehq/plot` this module uses (its own types need the DOM library, which the server lacks). */
interface PlotModule {
  plot(options: Record<string, unknown>): PlotElement;
  rectY(data: readonly object[], options: Record<string, unknown>): unknown;
  lineY(data: readonly object[], options: Record<string, unknown>): unknown;
  dot(data: readonly object[], options: Record<string, unknown>): unknown;
  ruleY(values: number[]): unknown;
}

/** The part of `linkedom` this module uses. */
interface LinkedomModule {
  parseHTML(html: string): { document: unknown };
}

interface Libraries {
  Plot: PlotModule;
  linkedom: LinkedomModule;
}

let libraries: Promise<Libraries> | undefined;

/** Plot and linkedom, loaded on the first chart (a failed load is retried by the next chart). */
function loadLibraries(): Promise<Libraries> {
  libraries ??= Promise.all([importEsm<PlotModule>("@observablehq/plot"), importEsm<LinkedomModule>("linkedom")]).then(
    ([Plot, linkedom]) => ({ Plot, linkedom }),
    (err: unknown) => {
      libraries = undefined;
      throw err;
    },
  );
  return libraries;
}

/** Every chart's size in SVG units (it scales down to its container: assets/console.css `.chart`). */
const WIDTH = 720;
const HEIGHT = 260;

/** What a chart says and how its series look. */
export interface ChartStyle {
  /** The chart's accessible name: what it shows, over which time (e.g. "Deliveries per hour, last 24 hours: delivered, failed, pending"). */
  name: string;
  /** Colour of each series by key (3:1 contrast or more against white, WCAG 1.4.11). */
  colors: Record<string, string>;
  /** The y axis' label, e.g. "Deliveries" or "Latency (ms)". */
  yLabel: string;
}


/** Points of `data` for Plot: one per hour and series; a null value stays null (a line's gap, never a zero). */
function points(data: HourlySeries): { hour: Date; key: string; value: number | null }[] {
  return data.series.flatMap((s) => data.hours.map((hour, i) => ({ hour, key: s.label, value: s.values[i] ?? null })));
}

/**
 * The SVG as a page embeds it: Plot's `<style>` removed (CSP), and Plot's `aria-label`s on its groups ("rect",
 * "y-axis tick", ...) removed too: on a `<g>` without a role they are prohibited ARIA (axe `aria-prohibited-attr`),
 * and inside `role="img"` nothing is read anyway. The chart's one name is on the `<svg>`.
 */
function finish(svg: PlotElement, style: ChartStyle): string {
  svg.querySelector("style")?.remove();
  for (const node of svg.querySelectorAll("[aria-label], [aria-description]")) {
    node.removeAttribute("aria-label");
    node.removeAttribute("aria-description");
  }
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", style.name);
  return svg.outerHTML;
}

/** Options every chart shares; a fresh document per chart (Plot creates its nodes in it), so renders stay apart. */
function common(linkedom: LinkedomModule, data: HourlySeries, style: ChartStyle): Record<string, unknown> {
  const labels = data.series.map((s) => s.label);
  return {
    document: linkedom.parseHTML("<!doctype html><html><body></body></html>").document,
    className: "chart",
    width: WIDTH,
    height: HEIGHT,
    marginLeft: 56,
    x: { type: "utc", label: null, domain: [data.hours[0], new Date(data.hours[data.hours.length - 1]!.getTime() + 3_600_000)] },
    y: { label: style.yLabel, grid: true, nice: true, zero: true },
    color: { domain: labels, range: data.series.map((s) => style.colors[s.key] ?? "#505a5f") },
  };
}

/**
 * Stacked bars, one per hour, a segment per series (counts: deliveries by outcome, requests by status class).
 * @returns the `<svg>` markup (role img, `aria-label` = `style.name`), with no inline style.
 */
export async function stackedBarsSvg(data: HourlySeries, style: ChartStyle): Promise<string> {
  const { Plot, linkedom } = await loadLibraries();
  const options = common(linkedom, data, style);
  // Counts are whole: at most one tick per unit (a chart of 1 delivery has ticks 0 and 1, never 0.2).
  const highest = Math.max(0, ...data.hours.map((_, i) => data.series.reduce((sum, s) => sum + (s.values[i] ?? 0), 0)));
  const svg = Plot.plot({
    ...options,
    y: { ...(options.y as object), ticks: Math.max(1, Math.min(5, highest)), tickFormat: ",d" },
    marks: [Plot.rectY(points(data), { x: "hour", interval: "hour", y: "value", fill: "key", insetLeft: 0.5, insetRight: 0.5 }), Plot.ruleY([0])],
  });
  return finish(svg, style);
}

/**
 * A line per series over the hours, a dot per value, gaps where a value is null (measures: latency p50 / p95).
 * @returns the `<svg>` markup (role img, `aria-label` = `style.name`), with no inline style.
 */
export async function linesSvg(data: HourlySeries, style: ChartStyle): Promise<string> {
  const { Plot, linkedom } = await loadLibraries();
  // Each point at the middle of its hour, as the bars of the other charts are.
  const middle = points(data).map((p) => ({ ...p, hour: new Date(p.hour.getTime() + 1_800_000) }));
  const svg = Plot.plot({
    ...common(linkedom, data, style),
    marks: [Plot.lineY(middle, { x: "hour", y: "value", stroke: "key", strokeWidth: 2 }), Plot.dot(middle.filter((p) => p.value !== null), { x: "hour", y: "value", fill: "key", r: 2 }), Plot.ruleY([0])],
  });
  return finish(svg, style);
}
