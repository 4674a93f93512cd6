/**
 * Runs the built Stageline server as `npm start` does (`node <SERVER_NODE_FLAGS> server/dist/main.js`, see
 * server/src/runtime-flags.ts) as a child process for the benchmark: fresh data
 * directory or PostgreSQL schema, ephemeral port, rate limit raised through RATE_LIMIT_PER_MINUTE (the limiter and
 * its database counter stay on), pinned to one core with `taskset` when available. With `cpuProfDir` the child runs
 * under `node --cpu-prof` and writes a `.cpuprofile` there when it stops.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { SERVER_NODE_FLAGS } from "../../server/src/runtime-flags";

export const REPO_ROOT = path.resolve(__dirname, "../..");
export const SERVER_ENTRY = path.join(REPO_ROOT, "server/dist/main.js");

let tasksetChecked: boolean | undefined;

/** True when `taskset` (util-linux) can set CPU affinity here. */
export function hasTaskset(): boolean {
  if (tasksetChecked === undefined) {
    try {
      execFileSync("taskset", ["-p", String(process.pid)], { stdio: "ignore" });
      tasksetChecked = true;
    } catch {
      tasksetChecked = false;
    }
  }
  return tasksetChecked;
}

/** Prefixes `command` with `taskset -c <core>` when a core is given and taskset exists. */
export function pinnedCommand(core: number | null, command: string[]): string[] {
  return core !== null && hasTaskset() ? ["taskset", "-c", String(core), ...command] : command;
}

/** Pins this (the load generator's) process to `core`; returns false when that is not possible. */
export function pinSelf(core: number): boolean {
  if (!hasTaskset()) return false;
  // -a: every thread (libuv pool, V8 helpers); a thread that exits meanwhile can fail it, so retry, then main only.
  for (const args of [["-a"], ["-a"], []]) {
    try {
      execFileSync("taskset", [...args, "-p", "-c", String(core), String(process.pid)], { stdio: "ignore" });
      return true;
    } catch {
      /* next attempt */
    }
  }
  return false;
}

export interface ServerOptions {
  /** PGlite DATA_DIR (ignored when `databaseUrl` is set, but still used for the admin handshake file). */
  dataDir: string;
  /** PostgreSQL URL with `?schema=`; unset = PGlite. */
  databaseUrl?: string;
  /** RATE_LIMIT_PER_MINUTE for the child. */
  rateLimitPerMinute: number;
  /** Core to pin to, or null. */
  core: number | null;
  /** When set, run under `node --cpu-prof` writing profiles here. */
  cpuProfDir?: string;
  /** Everything the server writes (stdout and stderr) is appended here. */
  logFile: string;
  /** When set, preload lib/memory-probe.cjs, appending process.memoryUsage() samples to this file. */
  memProbeFile?: string;
  /** Label used in error messages and profile names. */
  label: string;
  /** Extra environment of this start (e.g. a phase's dispatcher settings), applied after the defaults above. */
  env?: Record<string, string>;
}

export interface ServerProcess {
  url: string;
  pid: number;
  /** "pglite" | "postgres", as the server reported it. */
  database: string;
  /** The key printed on the first start of an empty database, else null. */
  demoApiKey: string | null;
  /** The console's demo user printed on the first start of an empty database, else null. */
  demoUser: { email: string; password: string } | null;
  /** Throws when the server exited on its own (crashed) since it started. */
  assertAlive(): void;
  /** The last lines the server wrote to stderr (for error reports). */
  stderrTail(): string;
  /** The last `n` error lines of the server's log (pino level ≥ 50, or plain lines mentioning an error). */
  recentErrors(n: number): string[];
  /** SIGTERM, then SIGKILL after 20 s. Resolves when it has exited. */
  stop(): Promise<void>;
}

/**
 * Starts the server and waits for `Stageline listening on <url> (database: <kind>)`.
 * @throws when the build is missing, or the server exits or does not listen within 90 s.
 */
export async function startServerProcess(options: ServerOptions): Promise<ServerProcess> {
  if (!fs.existsSync(SERVER_ENTRY)) throw new Error(`${SERVER_ENTRY} is missing: run \`npm run build\` first`);
  const nodeArgs: string[] = [];
  if (options.cpuProfDir) {
    fs.mkdirSync(options.cpuProfDir, { recursive: true });
    nodeArgs.push("--cpu-prof", `--cpu-prof-dir=${options.cpuProfDir}`, `--cpu-prof-name=${options.label}-${Date.now()}.cpuprofile`);
  }
  if (options.memProbeFile) nodeArgs.push("--require", path.join(__dirname, "memory-probe.cjs"));
  // Extra node flags for experiments (e.g. BENCH_SERVER_NODE_ARGS="--trace-gc"; output lands in the server log).
  nodeArgs.push(...(process.env.BENCH_SERVER_NODE_ARGS ?? "").split(/\s+/).filter(Boolean));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...(options.memProbeFile ? { BENCH_MEM_FILE: options.memProbeFile } : {}),
    PORT: "0",
    HOST: "127.0.0.1",
    DATA_DIR: options.dataDir,
    NODE_ENV: "test",
    LOG_LEVEL: process.env.BENCH_SERVER_LOG_LEVEL ?? "warn",
    RATE_LIMIT_PER_MINUTE: String(options.rateLimitPerMinute),
    ...options.env,
  };
  if (options.databaseUrl) env.DATABASE_URL = options.databaseUrl;
  else delete env.DATABASE_URL;
  const [cmd, ...args] = pinnedCommand(options.core, [process.execPath, ...SERVER_NODE_FLAGS, ...nodeArgs, SERVER_ENTRY]);
  const child: ChildProcess = spawn(cmd!, args, { cwd: REPO_ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  const log = fs.createWriteStream(options.logFile, { flags: "a" });
  child.stdout!.pipe(log, { end: false });
  child.stderr!.pipe(log, { end: false });
  let stdout = "";
  let stderr = "";
  let stopping = false;
  let exitInfo: string | null = null;
  child.stderr!.on("data", (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-8000);
  });
  child.stdout!.on("data", (d: Buffer) => {
    stdout = (stdout + d.toString()).slice(-8000);
  });
  const exited = new Promise<void>((resolve) => {
    child.once("exit", (code, signal) => {
      exitInfo = signal ? `signal ${signal}` : `exit code ${code}`;
      resolve();
    });
  });
  const started = await new Promise<{ url: string; database: string; key: string | null; user: { email: string; password: string } | null }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${options.label}: server did not listen within 90 s\n${stderr}`)), 90_000);
    const onData = () => {
      const m = /Stageline listening on (\S+) \(database: (\w+)\)/.exec(stdout);
      if (!m) return;
      clearTimeout(timer);
      child.stdout!.off("data", onData);
      const key = /Demo API key: (\S+)/.exec(stdout);
      const email = /Demo user: (\S+)/.exec(stdout);
      const password = /Demo password: (\S+)/.exec(stdout);
      const user = email && password ? { email: email[1]!, password: password[1]! } : null;
      resolve({ url: m[1]!, database: m[2]!, key: key ? key[1]! : null, user });
    };
    child.stdout!.on("data", onData);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`${options.label}: server exited (${exitInfo}) before listening\n${stderr}${stdout}`));
    });
  });
  return {
    url: started.url,
    pid: child.pid!,
    database: started.database,
    demoApiKey: started.key,
    demoUser: started.user,
    assertAlive() {
      if (exitInfo && !stopping) throw new Error(`${options.label}: the server crashed (${exitInfo})\n${stderr}`);
    },
    stderrTail: () => stderr,
    recentErrors(n: number) {
      try {
        const lines = fs.readFileSync(options.logFile, "utf8").split("\n");
        const errors = lines.filter((l) => {
          const level = /"level":(\d+)/.exec(l);
          return level ? Number(level[1]) >= 50 : /error/i.test(l);
        });
        return errors.slice(-n).map((l) => l.slice(0, 600));
      } catch {
        return [];
      }
    },
    async stop() {
      if (exitInfo) return;
      stopping = true;
      const kill = setTimeout(() => child.kill("SIGKILL"), 20_000);
      child.kill("SIGTERM");
      await exited;
      clearTimeout(kill);
    },
  };
}
