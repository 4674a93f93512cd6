/**
 * The built server (`server/dist/main.js`, what `npm start` runs) as a real OS child process, for tests that need
 * one: a `kill -9` in the middle of work, a restart on the same data, several processes on one PostgreSQL schema.
 *
 * A store is the database the processes share and that outlives each of them: a PGlite data directory on disk
 * (`DATA_DIR`) by default, or, when TEST_DATABASE_URL is set (CI's PostgreSQL pass), a fresh schema `t_proc_...` on
 * that server (plus a data directory, which then only holds the admin handshake file). The first process on a
 * store seeds the demo company (Sales pipeline, all-scope key) and prints its key; this helper reads the key and
 * the URL from stdout.
 *
 * Every child started here is tracked: `killServerProcesses()` (call it in afterEach/afterAll) SIGKILLs any still
 * running, and so does the jest worker's own exit, so no test leaves a server behind whatever happened.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { SERVER_NODE_FLAGS } from "../../src/runtime-flags";

/** The repository root (server/test/helpers -> ../../..). */
const REPO_ROOT = path.resolve(__dirname, "..", "..", "..");
const SERVER_MAIN = path.join(REPO_ROOT, "server", "dist", "main.js");
/**
 * Deadline of a server process's start. About 2 s on an idle machine; a fresh PGlite store (migrations, demo seed)
 * took 62 s at a load of 28 on two cores, which failed every test of trigger-live: a deadline for a stuck start, not
 * a speed target.
 */
const START_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 15_000;

/** The database some server processes share, one after another or at once. */
export interface ServerStore {
  /** `DATA_DIR` of the processes: the PGlite database on disk (PGlite), or just the admin handshake (PostgreSQL). */
  dataDir: string;
  /** `DATABASE_URL` of the processes (a fresh schema), or undefined on PGlite. */
  databaseUrl: string | undefined;
  /** The database kind the processes must report at start-up. */
  kind: "pglite" | "postgres";
  /** Deletes the data directory and drops the schema. Call once no process uses the store any more. */
  remove(): Promise<void>;
}

/** A running (or crashed) server process. */
export interface ServerProcess {
  /** Base URL, e.g. `http://127.0.0.1:43121`. */
  url: string;
  pid: number;
  /** The demo company's all-scope API key when this start seeded it (first start on an empty store), else null. */
  demoApiKey: string | null;
  /** Everything the process wrote to stdout and stderr so far (for failure messages). */
  output(): string;
  /** The JSON log lines (pino) it wrote to stdout so far, parsed. */
  logs(): Record<string, unknown>[];
  /** Whether the process has exited. */
  exited(): boolean;
  /** `kill -9`: the process dies at once without any clean-up, as in a crash. Resolves once it has exited. */
  crash(): Promise<void>;
  /** Graceful stop: SIGTERM and wait for the exit (SIGKILL after 15 s). */
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

let built = false;

/**
 * Brings `server/dist` up to date (`tsc -b server`, a quick no-op after the root build), so these tests never run
 * a stale or missing build.
 * @throws Error with the compiler output when the server does not compile.
 */
export function ensureServerBuilt(): void {
  if (built) return;
  const tsc = require.resolve("typescript/bin/tsc", { paths: [REPO_ROOT] });
  try {
    execFileSync(process.execPath, [tsc, "-b", path.join(REPO_ROOT, "server")], { cwd: REPO_ROOT, stdio: "pipe" });
  } catch (err) {
    const e = err as { stdout?: Buffer; stderr?: Buffer };
    throw new Error(`The server does not build (tsc -b server):\n${e.stdout?.toString() ?? ""}${e.stderr?.toString() ?? ""}`);
  }
  if (!fs.existsSync(SERVER_MAIN)) throw new Error(`${SERVER_MAIN} is missing after building the server.`);
  built = true;
}

/** A fresh, empty store: a temporary data directory, and a new schema when TEST_DATABASE_URL is set. */
export function createServerStore(): ServerStore {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "stageline-proc-"));
  const pgUrl = process.env.TEST_DATABASE_URL || undefined;
  const schema = `t_proc_${Date.now().toString(36)}_${crypto.randomBytes(4).toString("hex")}`;
  const databaseUrl = pgUrl ? `${pgUrl}${pgUrl.includes("?") ? "&" : "?"}schema=${schema}` : undefined;
  return {
    dataDir,
    databaseUrl,
    kind: pgUrl ? "postgres" : "pglite",
    remove: async () => {
      fs.rmSync(dataDir, { recursive: true, force: true });
      if (!pgUrl) return;
      const { Client } = await import("pg");
      const client = new Client({ connectionString: pgUrl });
      try {
        await client.connect();
        await client.query("SET lock_timeout = '5s'");
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      } catch {
        // CI drops every t_ schema after the PostgreSQL pass anyway.
      } finally {
        await client.end().catch(() => undefined);
      }
    },
  };
}

/** Waits for the child to exit, up to `ms`; true when it has exited. */
function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/**
 * Starts `node <SERVER_NODE_FLAGS> server/dist/main.js` (as `npm start` does) on `store`: test mode, loopback, ephemeral port; `env` last (e.g.
 * `WEBHOOK_LEASE_MS`, `RATE_LIMIT_PER_MINUTE`, `LOG_LEVEL`). Dispatcher and rate-limit variables of the test
 * process itself are not passed on. Resolves once the process printed `Stageline listening on <url> (database: ...)`.
 * @throws when the process exits or stays silent for START_TIMEOUT_MS (120 s), or reports another database kind than the store's; the
 *   error carries its output, and the process is killed.
 */
export async function startServerProcess(store: ServerStore, env: Record<string, string> = {}): Promise<ServerProcess> {
  ensureServerBuilt();
  const childEnv: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (/^(WEBHOOK_|RATE_LIMIT_|DATABASE_URL$|SEED_DEMO$|LOG_LEVEL$|PORT$|HOST$|DATA_DIR$)/.test(name)) continue;
    childEnv[name] = value;
  }
  Object.assign(childEnv, { PORT: "0", HOST: "127.0.0.1", NODE_ENV: "test", DATA_DIR: store.dataDir, SEED_DEMO: "true" });
  if (store.databaseUrl) childEnv.DATABASE_URL = store.databaseUrl;
  Object.assign(childEnv, env);

  const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, SERVER_MAIN], { cwd: REPO_ROOT, env: childEnv, stdio: ["ignore", "pipe", "pipe"] });
  running.add(child);
  child.once("exit", () => running.delete(child));
  let output = "";
  const logs: Record<string, unknown>[] = [];
  const lineListeners: ((line: string) => void)[] = [];
  let buffered = "";
  child.stdout!.setEncoding("utf8");
  child.stderr!.setEncoding("utf8");
  child.stderr!.on("data", (chunk: string) => (output += chunk));
  child.stdout!.on("data", (chunk: string) => {
    output += chunk;
    buffered += chunk;
    let newline: number;
    while ((newline = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, newline).trim();
      buffered = buffered.slice(newline + 1);
      if (line.startsWith("{")) {
        try {
          logs.push(JSON.parse(line) as Record<string, unknown>);
        } catch {
          /* not a log line */
        }
      }
      for (const listener of lineListeners) listener(line);
    }
  });

  const kill = async (signal: NodeJS.Signals, ms: number): Promise<boolean> => {
    if (await waitForExit(child, 0)) return true;
    child.kill(signal);
    return waitForExit(child, ms);
  };
  const handle = (url: string, demoApiKey: string | null): ServerProcess => ({
    url,
    pid: child.pid!,
    demoApiKey,
    output: () => output,
    logs: () => logs,
    exited: () => child.exitCode !== null || child.signalCode !== null,
    crash: async () => {
      if (!(await kill("SIGKILL", STOP_TIMEOUT_MS))) throw new Error(`server process ${child.pid} survived SIGKILL`);
    },
    stop: async () => {
      if (!(await kill("SIGTERM", STOP_TIMEOUT_MS))) await kill("SIGKILL", STOP_TIMEOUT_MS);
    },
  });

  try {
    const { url, apiKey } = await new Promise<{ url: string; apiKey: string | null }>((resolve, reject) => {
      let apiKey: string | null = null;
      const timer = setTimeout(() => reject(new Error(`The server did not start within ${START_TIMEOUT_MS / 1000} s.`)), START_TIMEOUT_MS);
      lineListeners.push((line) => {
        const key = /^Demo API key: (\S+)$/.exec(line);
        if (key) apiKey = key[1];
        const listening = /^Stageline listening on (\S+) \(database: (\w+)\)/.exec(line);
        if (!listening) return;
        clearTimeout(timer);
        if (listening[2] !== store.kind) reject(new Error(`The server runs on ${listening[2]}, not on the store's ${store.kind}.`));
        else resolve({ url: listening[1], apiKey });
      });
      child.once("exit", (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`The server exited during start-up (code ${code}, signal ${signal}).`));
      });
      child.once("error", (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
    return handle(url, apiKey);
  } catch (err) {
    await kill("SIGKILL", STOP_TIMEOUT_MS);
    throw new Error(`${(err as Error).message}\n--- server output ---\n${output}`);
  }
}

/** SIGKILLs every server process this helper started that is still running, and waits for them to exit. */
export async function killServerProcesses(): Promise<void> {
  await Promise.all(
    [...running].map((child) => {
      child.kill("SIGKILL");
      return waitForExit(child, STOP_TIMEOUT_MS);
    }),
  );
}

export interface ApiResponse {
  status: number;
  /** The parsed JSON body, the raw text when it is not JSON, undefined when empty. */
  body: any;
}

/** A client of a server's external API (`x-api-key`, JSON bodies): `call("POST", "/v1/ext/items", {...})`. */
export function apiClient(baseUrl: string, apiKey: string): (method: string, path: string, body?: unknown) => Promise<ApiResponse> {
  return async (method, path, body) => {
    const headers: Record<string, string> = { "x-api-key": apiKey };
    if (body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(baseUrl + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    let parsed: unknown = text || undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* keep the raw text */
    }
    return { status: res.status, body: parsed };
  };
}

/** Resolves once `condition()` holds, checking every 20 ms; rejects after `timeoutMs` with `what()` in the message. */
export async function eventually(condition: () => boolean | Promise<boolean>, what: () => string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
