/** Command-line options of `npm run bench` (bench/run.ts). */

export const PHASES = ["pages", "list", "get", "patch", "create", "delete", "upsert", "notes", "markdown", "batch", "events", "tasks", "webhooks", "filters", "console", "client", "mcp", "oauth", "isolation", "backlog"] as const;
export type Phase = (typeof PHASES)[number];

export interface BenchOptions {
  quick: boolean;
  dbs: ("pglite" | "postgres")[];
  databaseUrl?: string;
  /** Seconds per measurement. */
  duration: number;
  /** Seconds of warm-up before each measured endpoint (not recorded). */
  warmup: number;
  connections: number;
  /** Alternating rounds of the server/baseline pairs (ratios), to even out drift. */
  rounds: number;
  /** Table sizes (items of the benchmark company) at which page cost is measured, ascending. */
  sizes: number[];
  phases: Set<Phase>;
  /** Webhook subscriptions used for delivery throughput (latency uses the first one alone). */
  subscriptions: number;
  /** Items created one by one for the delivery-latency measurement. */
  latencyItems: number;
  /** Items created in a burst for the delivery-throughput measurement. */
  burstItems: number;
  /** Issue 17, `isolation` phase: never-answering endpoints of another company, one measurement per count. */
  deadEndpoints: number[];
  /** Issue 17: healthy-endpoint events per measurement (isolation and backlog phases). */
  isolationEvents: number;
  /** Issue 17: seconds each measurement waits for the healthy deliveries after the last create (the phase's bound). */
  isolationCapS: number;
  /** Issue 17, `backlog` phase (PostgreSQL): failing subscriptions of another company, and pending deliveries behind them. */
  backlogSubscriptions: number;
  /** Pending deliveries for the large backlog figures (a 10k variant is always measured first). */
  backlogPending: number;
  /**
   * Issue 21, `client` phase: items iterated per measurement, ascending (the largest is seeded for another company's
   * pipeline with bulk SQL; the smaller counts stop early in the same pipeline).
   */
  clientSizes: number[];
  /** Issue 21: timed `items.get` calls of each kind (client and raw fetch, interleaved) for the per-call overhead. */
  clientCalls: number;
  /** RATE_LIMIT_PER_MINUTE given to the server. */
  rateLimit: number;
  /** pg pool size of the server (DATABASE_POOL_SIZE) and of the bare baseline. */
  poolSize: number;
  /** Keep temporary data directories and the PostgreSQL schema. */
  keep: boolean;
  /** Exit with code 3 when a PostgreSQL target is missed (full mode only). */
  assert: boolean;
}

export const USAGE = `Usage: npm run bench -- [options]      (or: npx tsx bench/run.ts [options] after npm run build)

  --quick               smoke test for CI: 2 s runs, 10k items only, under a minute, never fails on speed;
                        writes bench/results/quick.md instead of latest.md
  --db <which>          pglite | postgres | both   (default: pglite, plus postgres when DATABASE_URL is set;
                        with --quick: postgres when DATABASE_URL is set, else pglite)
  --duration <s>        seconds per measurement (default 10, quick 2)
  --warmup <s>          warm-up seconds per endpoint (default 2, quick 0.5)
  --connections <n>     concurrent connections (default 32)
  --rounds <n>          alternating server/baseline rounds for the ratios (default 2, quick 1)
  --sizes <a,b>         table sizes for the page-cost figures (default 10000,1000000; quick 10000)
  --only <phases>       comma list of: ${PHASES.join(", ")} (default: all)
  --subscriptions <n>   webhook subscriptions for the delivery throughput (default 8, quick 4)
  --dead-endpoints <a,b> isolation phase: never-answering endpoints of another company (default 0,100,1000; quick 0,20)
  --backlog <n>         backlog phase (PostgreSQL only): pending deliveries behind the failing subscriptions
                        (default 1000000 behind 1000 subscriptions; quick 10000 behind 100)
  --client-sizes <a,b>  client phase: items iterated through @stageline/client and raw fetch per measurement
                        (default 10000,100000; quick 500,2000; the largest is bulk-seeded)
  --client-calls <n>    client and mcp phases: timed calls of each kind for the overheads (default 2000, quick 50)
  --rate-limit <n>      RATE_LIMIT_PER_MINUTE for the server (default 1000000000)
  --pool-size <n>       DATABASE_POOL_SIZE of the server and pool size of the bare baseline (default 10)
  --keep                keep the temporary data directories and PostgreSQL schemas
  --no-assert           exit 0 even when a PostgreSQL target is missed

Results: a full run with default settings writes bench/results/latest.md (the previous one becomes previous.md);
a plain --quick run writes quick.md; any customised run (--only, --sizes, --duration, profiling...) custom.md.

Environment: DATABASE_URL=postgresql://... enables the PostgreSQL pass (a fresh schema bench_* is created and
dropped); BENCH_CPU_PROF=1 runs the server under node --cpu-prof and adds the hottest functions to the report;
BENCH_SERVER_NODE_ARGS adds node flags to the server (e.g. "--trace-gc", output in the kept server log);
BENCH_MEM_PROBE=1 preloads bench/lib/memory-probe.cjs into the server and reports what its peak RSS is made of.`;

function positive(name: string, raw: string | undefined, integer = true): number {
  const n = Number(raw);
  if (raw === undefined || !Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) {
    throw new Error(`${name} needs a positive ${integer ? "integer" : "number"} (got ${raw ?? "nothing"})`);
  }
  return n;
}

/**
 * True when the run measures with the default settings of its mode (full or `--quick`; any database selection):
 * only such a run may write bench/results/latest.md or quick.md. Profiling (BENCH_CPU_PROF, BENCH_MEM_PROBE)
 * perturbs the server, so it counts as customised too.
 */
export function isDefaultRun(o: BenchOptions, env: NodeJS.ProcessEnv = process.env): boolean {
  const defaults = parseOptions(o.quick ? ["--quick"] : [], { ...env, DATABASE_URL: o.databaseUrl }) as BenchOptions;
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  return (
    !env.BENCH_CPU_PROF &&
    !env.BENCH_MEM_PROBE &&
    (["duration", "warmup", "connections", "rounds", "sizes", "subscriptions", "latencyItems", "burstItems", "rateLimit", "poolSize", "deadEndpoints", "backlogPending", "clientSizes", "clientCalls"] as const).every((k) =>
      same(o[k], defaults[k]),
    ) &&
    o.phases.size === defaults.phases.size
  );
}

/**
 * Parses argv (without node and the script).
 * @throws on an unknown option or a bad value (the caller prints USAGE).
 */
export function parseOptions(argv: string[], env: NodeJS.ProcessEnv = process.env): BenchOptions | "help" {
  const quick = argv.includes("--quick");
  const databaseUrl = env.DATABASE_URL || undefined;
  const o: BenchOptions = {
    quick,
    // Quick mode runs one database by default (PostgreSQL when given, the asserted one) to stay under a minute.
    // PostgreSQL (the asserted pass) first: the load generator shares this process with the PGlite pass's in-process
    // seeding (a WebAssembly PostgreSQL and a million rows), which would otherwise still weigh on it.
    dbs: databaseUrl ? (quick ? ["postgres"] : ["postgres", "pglite"]) : ["pglite"],
    databaseUrl,
    duration: quick ? 2 : 10,
    warmup: quick ? 0.5 : 2,
    connections: 32,
    rounds: quick ? 1 : 2,
    sizes: quick ? [10_000] : [10_000, 1_000_000],
    phases: new Set(PHASES),
    subscriptions: quick ? 4 : 8,
    latencyItems: quick ? 20 : 200,
    burstItems: quick ? 50 : 1000,
    deadEndpoints: quick ? [0, 20] : [0, 100, 1000],
    isolationEvents: quick ? 20 : 50,
    isolationCapS: quick ? 8 : 120,
    backlogSubscriptions: quick ? 100 : 1000,
    backlogPending: quick ? 10_000 : 1_000_000,
    clientSizes: quick ? [500, 2000] : [10_000, 100_000],
    clientCalls: quick ? 50 : 2000,
    rateLimit: 1_000_000_000,
    poolSize: Number(env.DATABASE_POOL_SIZE ?? 10),
    keep: false,
    assert: !quick,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [flag, inline] = arg.startsWith("--") && arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [arg, undefined];
    const value = () => inline ?? argv[++i];
    switch (flag) {
      case "--quick":
        break;
      case "--help":
      case "-h":
        return "help";
      case "--db": {
        const v = value();
        if (v === "both") o.dbs = ["postgres", "pglite"];
        else if (v === "pglite" || v === "postgres") o.dbs = [v];
        else throw new Error(`--db must be pglite, postgres or both (got ${v ?? "nothing"})`);
        break;
      }
      case "--duration":
        o.duration = positive("--duration", value(), false);
        break;
      case "--warmup":
        o.warmup = Number(value());
        if (!Number.isFinite(o.warmup) || o.warmup < 0) throw new Error("--warmup needs a number of seconds (0 for none)");
        break;
      case "--connections":
        o.connections = positive("--connections", value());
        break;
      case "--rounds":
        o.rounds = positive("--rounds", value());
        break;
      case "--sizes": {
        const raw = value() ?? "";
        o.sizes = raw.split(",").map((s) => positive("--sizes", s.trim()));
        o.sizes.sort((a, b) => a - b);
        break;
      }
      case "--only": {
        const names = (value() ?? "").split(",").map((s) => s.trim()).filter(Boolean);
        const unknown = names.filter((n) => !(PHASES as readonly string[]).includes(n));
        if (!names.length || unknown.length) throw new Error(`--only takes a comma list of ${PHASES.join(", ")} (unknown: ${unknown.join(", ") || "none given"})`);
        o.phases = new Set(names as Phase[]);
        break;
      }
      case "--subscriptions":
        o.subscriptions = positive("--subscriptions", value());
        break;
      case "--dead-endpoints": {
        const raw = value() ?? "";
        o.deadEndpoints = raw.split(",").map((s) => {
          const n = Number(s.trim());
          if (!Number.isInteger(n) || n < 0 || n > 1000) throw new Error(`--dead-endpoints takes counts from 0 to 1000, the subscription limit per company (got ${s})`);
          return n;
        });
        break;
      }
      case "--backlog":
        o.backlogPending = positive("--backlog", value());
        break;
      case "--client-sizes": {
        const raw = value() ?? "";
        o.clientSizes = raw.split(",").map((s) => positive("--client-sizes", s.trim()));
        o.clientSizes.sort((a, b) => a - b);
        break;
      }
      case "--client-calls":
        o.clientCalls = positive("--client-calls", value());
        break;
      case "--rate-limit":
        o.rateLimit = positive("--rate-limit", value());
        break;
      case "--pool-size":
        o.poolSize = positive("--pool-size", value());
        break;
      case "--keep":
        o.keep = true;
        break;
      case "--no-assert":
        o.assert = false;
        break;
      default:
        throw new Error(`unknown option ${arg}`);
    }
  }
  if (o.dbs.includes("postgres") && !databaseUrl) throw new Error("--db postgres needs DATABASE_URL=postgresql://...");
  if (quick) o.assert = false;
  const smallest = o.sizes[0]!;
  if (smallest < 1000) throw new Error("--sizes: the smallest table must hold at least 1000 items (deep page at 90%)");
  return o;
}
