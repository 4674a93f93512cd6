/**
 * The `markdown` phase (issue 30, item 15): the console's note-body renderer on the largest bodies the contract allows.
 * Each pathological body of the unit test (server/test/helpers/pathological-note-bodies.ts: NOTE_BODY_MAX = 65,536
 * characters of quotes, ampersands, brackets, unclosed emphasis, bare URLs, e-mail addresses, images, empty
 * headings) is rendered by the server's built `renderNoteBody` (server/dist/console/note-markdown.js, built by
 * `npm run bench`) in this process: one untimed render of every body first (markdown-it's code compiled), then
 * `renderPhaseRounds` rounds, each rendering every body once in turn, so drift on a shared machine falls on all bodies.
 * Each render is timed alone with `performance.now()` (ms, the call only). No server or database is involved; the
 * server process is idle meanwhile and this process runs on the load generator's core.
 *
 * Figure: the worst time of any single timed render (target ≤ 500 ms per 65,536-character body); details: each body's
 * median and worst, the cold (first) render, and the HTML length. A rendering longer than NOTE_HTML_MAX (the
 * renderer's bound, which the unit test asserts) is an error of the phase.
 */
import path from "node:path";
import { PATHOLOGICAL_NOTE_BODIES } from "../../server/test/helpers/pathological-note-bodies";
import { ms, percentile } from "./format";
import type { PhaseHost } from "./isolation";
import { REPO_ROOT } from "./server-process";

/** Figure group of the phase in the report (issue 30's note renderer). */
const ITEM = 15;
/**
 * Worst single render of a 65,536-character body, ms. Measured on integ at 7b634e8 on the shared 2-core machine (load
 * average 5 to 6, pinned to one core): the slowest bodies (brackets, e-mail addresses) take 100 to 200 ms per render
 * and the worst of 80 renders was 255 to 345 ms. 500 ms lets load add half again to that tail, and is missed when the
 * slowest body's cost roughly doubles (a super-linear path in the renderer would cost seconds at this size).
 */
const TARGET_MS = 500;

/** Timed rounds (every body once per round): a few seconds in all with --quick. */
export function renderPhaseRounds(quick: boolean): number {
  return quick ? 3 : 10;
}

interface Renderer {
  renderNoteBody: (body: string) => string;
  NOTE_HTML_MAX: number;
}

function loadRenderer(): Renderer {
  const file = path.join(REPO_ROOT, "server/dist/console/note-markdown.js");
  const mod = require(file) as Partial<Renderer>;
  if (typeof mod.renderNoteBody !== "function" || typeof mod.NOTE_HTML_MAX !== "number") {
    throw new Error(`${path.relative(REPO_ROOT, file)} exports no renderNoteBody / NOTE_HTML_MAX (run npm run build; or the renderer moved: see bench/lib/markdown-phase.ts)`);
  }
  return mod as Renderer;
}

/** Runs the phase; appends its figure and details to the host's report. */
export async function runMarkdownPhase(host: PhaseHost): Promise<void> {
  await host.during("markdown: note renderer on 65,536-character pathological bodies", async () => {
    const { renderNoteBody, NOTE_HTML_MAX } = loadRenderer();
    const rounds = renderPhaseRounds(host.o.quick);
    const cold = new Map<string, number>();
    const htmlLength = new Map<string, number>();
    for (const [label, body] of PATHOLOGICAL_NOTE_BODIES) {
      const started = performance.now();
      const html = renderNoteBody(body);
      cold.set(label, performance.now() - started);
      htmlLength.set(label, html.length);
      if (html.length > NOTE_HTML_MAX) host.errors.push(`markdown phase: the ${label} body rendered ${html.length} characters, over NOTE_HTML_MAX (${NOTE_HTML_MAX})`);
    }
    const times = new Map<string, number[]>(PATHOLOGICAL_NOTE_BODIES.map(([label]) => [label, []]));
    for (let r = 0; r < rounds; r++) {
      for (const [label, body] of PATHOLOGICAL_NOTE_BODIES) {
        const started = performance.now();
        renderNoteBody(body);
        times.get(label)!.push(performance.now() - started);
      }
    }
    const all = [...times.values()].flat();
    const worst = Math.max(...all);
    const [worstLabel] = [...times].find(([, t]) => t.includes(worst))!;
    host.log(`    worst render ${ms(worst)} (${worstLabel}) of ${all.length}`);
    host.figures.push({
      item: ITEM,
      metric: `Note body rendered to HTML (${PATHOLOGICAL_NOTE_BODIES.length} pathological 65,536-character bodies × ${rounds}): worst single render`,
      value: worst,
      display: `${ms(worst)} (${worstLabel}; median of all ${ms(percentile(all, 50))})`,
      target: { op: "<=", limit: TARGET_MS, text: `≤ ${TARGET_MS} ms` },
    });
    host.details.push(
      "",
      `Note renderer (issue 30): the server's built renderNoteBody in the bench process, ${rounds} timed renders of each body after one untimed (cold) render:`,
      "",
      "| Body (65,536 characters) | median ms | worst ms | cold ms | HTML characters |",
      "|---|---|---|---|---|",
      ...[...times].map(
        ([label, t]) => `| ${label} | ${percentile(t, 50).toFixed(1)} | ${Math.max(...t).toFixed(1)} | ${cold.get(label)!.toFixed(1)} | ${htmlLength.get(label)!.toLocaleString("en-US")} |`,
      ),
      "",
    );
  });
}
