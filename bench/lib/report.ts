/**
 * The results report (issue #4): one markdown document with the command line, the machine, the versions and every
 * figure, each against its target. The same text is printed to the terminal and written to
 * `bench/results/latest.md` (a full default run; the previous one is kept as `previous.md`), `quick.md`
 * (`--quick`, so CI never overwrites the committed full results) or `custom.md` (any customised run), with the raw
 * numbers beside it as JSON.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { REPO_ROOT } from "./server-process";

export type Comparison = ">=" | "<=" | "<";

export interface Target {
  op: Comparison;
  limit: number;
  /** How the target reads in the table, e.g. "≥ 0.70x bare". */
  text: string;
}

export interface Figure {
  /**
   * Issue #4 item number (1..6) the figure belongs to, 7 for the console pages (issue 10), 8 for tasks (issue 12),
   * 9 for webhook isolation (issue 17), 10 for the TypeScript client (issue 21), 11 for subscription filters (issue 25),
   * 11 also for the MCP endpoint (issue 26), 12 for batch writes and 13 for the events feed (issue 31), 14 for OAuth
   * (issue 32), 15 for the console's note renderer (issue 30).
   */
  item: number;
  metric: string;
  value: number | null;
  /** Formatted value with its unit. */
  display: string;
  target?: Target;
}

export type Verdict = "pass" | "miss" | "info" | "no data";

/** Whether `value` meets `target` (no target: "info"). */
export function verdict(figure: Figure): Verdict {
  if (!figure.target) return "info";
  if (figure.value === null || !Number.isFinite(figure.value)) return "no data";
  const { op, limit } = figure.target;
  const ok = op === ">=" ? figure.value >= limit : op === "<=" ? figure.value <= limit : figure.value < limit;
  return ok ? "pass" : "miss";
}

export interface PassReport {
  db: "postgres" | "pglite";
  /** Human description of the database, e.g. "PostgreSQL 15.20 (schema bench_x)". */
  dbDescription: string;
  /** Targets are asserted for this pass (PostgreSQL); informational otherwise (PGlite). */
  asserted: boolean;
  figures: Figure[];
  /** Extra markdown lines: per-round numbers, counts, RSS per phase, notes. */
  details: string[];
  /** Failures that make the run unusable (non-2xx responses, crashes, missing deliveries). */
  errors: string[];
  /** Profile summaries (BENCH_CPU_PROF=1), markdown. */
  profiles: string[];
}

export interface RunInfo {
  commandLine: string;
  startedAt: Date;
  finishedAt: Date;
  quick: boolean;
  settings: string[];
  versions: Record<string, string>;
}

function safe(fn: () => string, fallback = "unknown"): string {
  try {
    return fn().trim() || fallback;
  } catch {
    return fallback;
  }
}

/** Version of an installed npm package, read from its package.json. */
export function packageVersion(name: string): string {
  return safe(() => (JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "node_modules", name, "package.json"), "utf8")) as { version: string }).version);
}

/** CPU, cores, memory, OS and the git commit of the working tree. */
export function machineInfo(): string[] {
  const cpus = os.cpus();
  const commit = safe(() => execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: REPO_ROOT, encoding: "utf8" }));
  const dirty = safe(() => execFileSync("git", ["status", "--porcelain"], { cwd: REPO_ROOT, encoding: "utf8" }), "");
  return [
    `CPU: ${cpus[0]?.model ?? "unknown"}, ${cpus.length} logical cores`,
    `Memory: ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`,
    `OS: ${os.type()} ${os.release()} (${os.arch()})`,
    `Git commit: ${commit}${dirty ? " (with uncommitted changes)" : ""}`,
  ];
}

/** How the benchmark was invoked, as the user would type it. */
export function commandLine(argv: string[] = process.argv.slice(2)): string {
  const args = argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`)).join(" ");
  const viaNpm = process.env.npm_lifecycle_event === "bench";
  const base = viaNpm ? `npm run bench${args ? " --" : ""}` : "npx tsx bench/run.ts";
  const env = process.env.DATABASE_URL ? "DATABASE_URL=<set> " : "";
  const prof = process.env.BENCH_CPU_PROF ? `BENCH_CPU_PROF=${process.env.BENCH_CPU_PROF} ` : "";
  return `${prof}${env}${base}${args ? ` ${args}` : ""}`;
}

const cell = (s: string) => s.replace(/\|/g, "\\|");

/** Markdown for one database pass. */
function renderPass(pass: PassReport): string[] {
  const lines = [`## ${pass.db === "postgres" ? "PostgreSQL" : "PGlite"}: ${pass.dbDescription}`, ""];
  if (!pass.asserted) {
    lines.push("Targets are set for PostgreSQL; on PGlite (embedded, single connection, WebAssembly) they are shown for reference only.", "");
  }
  lines.push("| # | Metric | Value | Target | Result |", "|---|---|---|---|---|");
  for (const f of pass.figures) {
    const v = verdict(f);
    const shown = v === "info" ? "" : pass.asserted ? `**${v}**` : `${v} (reference)`;
    lines.push(`| ${f.item} | ${cell(f.metric)} | ${cell(f.display)} | ${cell(f.target?.text ?? "")} | ${shown} |`);
  }
  lines.push("");
  if (pass.errors.length) {
    lines.push("**Errors (the figures above are not valid):**", "");
    for (const e of pass.errors) lines.push(`- ${e.split("\n")[0]}`);
    lines.push("");
  }
  if (pass.details.length) lines.push(...pass.details, "");
  if (pass.profiles.length) lines.push(...pass.profiles, "");
  return lines;
}

/** The whole report as markdown. */
export function renderReport(info: RunInfo, passes: PassReport[], method: string[]): string {
  const lines = [
    `# Stageline benchmark${info.quick ? " (quick mode: smoke test, figures not meaningful)" : ""}`,
    "",
    `- Command: \`${info.commandLine}\``,
    `- Date: ${info.startedAt.toISOString()} (took ${Math.round((info.finishedAt.getTime() - info.startedAt.getTime()) / 1000)} s)`,
    ...machineInfo().map((l) => `- ${l}`),
    `- Versions: ${Object.entries(info.versions)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}`,
    ...info.settings.map((s) => `- ${s}`),
    "",
  ];
  for (const pass of passes) lines.push(...renderPass(pass));
  lines.push("## Method", "", ...method, "");
  return lines.join("\n");
}

/** Which results file a run writes: a full default run, a quick run, or anything customised. */
export type ReportKind = "latest" | "quick" | "custom";

/**
 * Writes the report: `latest.md` for a full run with default settings (an existing one moves to `previous.md`),
 * `quick.md` for `--quick`, and `custom.md` for any other run (`--only`, other sizes or durations, profiling), so
 * ad-hoc runs never replace the committed full results. The raw data goes beside it as JSON (ignored by git).
 * @returns the markdown path.
 */
export function writeReport(resultsDir: string, kind: ReportKind, markdown: string, raw: unknown): string {
  fs.mkdirSync(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `${kind}.md`);
  if (kind === "latest" && fs.existsSync(file)) {
    fs.renameSync(file, path.join(resultsDir, "previous.md"));
    const json = path.join(resultsDir, "latest.json");
    if (fs.existsSync(json)) fs.renameSync(json, path.join(resultsDir, "previous.json"));
  }
  fs.writeFileSync(file, markdown);
  fs.writeFileSync(path.join(resultsDir, `${kind}.json`), JSON.stringify(raw, null, 2));
  return file;
}
