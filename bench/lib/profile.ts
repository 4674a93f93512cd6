/**
 * Summarises a V8 `.cpuprofile` (written by `node --cpu-prof`, see BENCH_CPU_PROF in run.ts): the functions with
 * the most self time, and self time per package (node_modules/<name>, server code, node internals), so a missed
 * target comes with where the server spends its CPU.
 *
 * Also runnable on its own: `npx tsx bench/lib/profile.ts <file.cpuprofile> [top]`.
 */
import fs from "node:fs";
import path from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  hitCount?: number;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export interface ProfileSummary {
  file: string;
  totalMs: number;
  idleMs: number;
  topFunctions: { name: string; selfMs: number; share: number }[];
  byPackage: { name: string; selfMs: number; share: number }[];
}

/** Where a script URL comes from: an npm package, the server's own code, node internals, or other. */
function packageOf(url: string): string {
  if (!url) return "(native / V8)";
  if (url.startsWith("node:")) return "node internals";
  const nm = url.lastIndexOf("node_modules/");
  if (nm >= 0) {
    const rest = url.slice(nm + "node_modules/".length).split("/");
    return rest[0]!.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const m = /\/(server|shared)\/dist\//.exec(url);
  if (m) return `${m[1]} (own code)`;
  return "other";
}

function shortUrl(url: string): string {
  const nm = url.lastIndexOf("node_modules/");
  if (nm >= 0) return url.slice(nm + "node_modules/".length);
  const own = /\/((server|shared)\/dist\/.*)$/.exec(url);
  if (own) return own[1]!;
  return url.replace(/^file:\/\//, "");
}

/** Reads and summarises one profile. */
export function summariseProfile(file: string, top = 15): ProfileSummary {
  const profile = JSON.parse(fs.readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  if (profile.samples && profile.timeDeltas) {
    for (let i = 0; i < profile.samples.length; i++) {
      const id = profile.samples[i]!;
      selfUs.set(id, (selfUs.get(id) ?? 0) + Math.max(0, profile.timeDeltas[i] ?? 0));
    }
  } else {
    const total = profile.endTime - profile.startTime;
    const hits = profile.nodes.reduce((s, n) => s + (n.hitCount ?? 0), 0) || 1;
    for (const n of profile.nodes) selfUs.set(n.id, ((n.hitCount ?? 0) / hits) * total);
  }
  // WebAssembly frames (PGlite's PostgreSQL, Prisma's query compiler) have no package in their URL: attribute them
  // to the package of the nearest JavaScript caller.
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const wasmOwner = (id: number): string => {
    for (let cur = parent.get(id); cur !== undefined; cur = parent.get(cur)) {
      const url = byId.get(cur)?.callFrame.url ?? "";
      if (url && !url.startsWith("wasm://")) return `${packageOf(url)} (WebAssembly)`;
    }
    return "WebAssembly (unknown caller)";
  };
  const fns = new Map<string, number>();
  const pkgs = new Map<string, number>();
  let totalUs = 0;
  let idleUs = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (!node) continue;
    totalUs += us;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === "(idle)" || functionName === "(program)" || functionName === "(garbage collector)") {
      if (functionName === "(idle)") idleUs += us;
      fns.set(functionName, (fns.get(functionName) ?? 0) + us);
      pkgs.set(functionName, (pkgs.get(functionName) ?? 0) + us);
      continue;
    }
    const where = url.startsWith("wasm://") ? `[${wasmOwner(id)}]` : url ? `${shortUrl(url)}:${lineNumber + 1}` : "(native)";
    const name = `${functionName || "(anonymous)"} ${where}`;
    fns.set(name, (fns.get(name) ?? 0) + us);
    const pkg = url.startsWith("wasm://") ? wasmOwner(id) : packageOf(url);
    pkgs.set(pkg, (pkgs.get(pkg) ?? 0) + us);
  }
  const busyUs = Math.max(1, totalUs - idleUs);
  const rank = (m: Map<string, number>, n: number) =>
    [...m.entries()]
      .filter(([name]) => name !== "(idle)")
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, us]) => ({ name, selfMs: us / 1000, share: us / busyUs }));
  return { file, totalMs: totalUs / 1000, idleMs: idleUs / 1000, topFunctions: rank(fns, top), byPackage: rank(pkgs, 12) };
}

/** Markdown for one summary (shares are of the busy, non-idle time). */
export function renderProfile(summary: ProfileSummary): string[] {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  return [
    `### CPU profile ${path.basename(summary.file)}`,
    "",
    `Sampled ${(summary.totalMs / 1000).toFixed(1)} s, of which ${(summary.idleMs / 1000).toFixed(1)} s idle. Shares are of the busy time.`,
    "",
    "| Self time by package | ms | share |",
    "|---|---|---|",
    ...summary.byPackage.map((p) => `| ${p.name} | ${p.selfMs.toFixed(0)} | ${pct(p.share)} |`),
    "",
    "| Top functions by self time | ms | share |",
    "|---|---|---|",
    ...summary.topFunctions.map((f) => `| \`${f.name.replace(/\|/g, "\\|")}\` | ${f.selfMs.toFixed(0)} | ${pct(f.share)} |`),
    "",
  ];
}

if (require.main === module) {
  const [file, top] = process.argv.slice(2);
  if (!file) {
    process.stderr.write("usage: npx tsx bench/lib/profile.ts <file.cpuprofile> [top]\n");
    process.exit(2);
  }
  process.stdout.write(renderProfile(summariseProfile(file, Number(top ?? 25))).join("\n") + "\n");
}
