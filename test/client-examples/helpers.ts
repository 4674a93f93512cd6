/**
 * Helpers for the tests of client/examples (issue 21, item 3): a real Stageline server in this process (embedded
 * PGlite, or a fresh PostgreSQL schema with TEST_DATABASE_URL) seeded with the demo company, and the example scripts
 * run the way their README says (TypeScript through tsx, in client/examples, configured through the environment), as
 * child processes whose output lines the test can wait for.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { Stageline } from "@stageline/client";
import { startServer, type RunningServer } from "../../server/src/server";
import { testConfig } from "../../server/test/helpers/test-server";

/** The examples' folder (their working directory). */
export const EXAMPLES_DIR = path.resolve(__dirname, "../../client/examples");

/** A started server with the demo company, and a client for it. */
export interface ExampleServer {
  server: RunningServer;
  url: string;
  apiKey: string;
  client: Stageline;
}

/**
 * Starts the server with the demo company (pipeline "Sales": stages Lead, Qualified, Proposal, Closed; custom
 * fields email and deal_value) and the per-key rate limit raised to `ratePerMinute` (the examples send hundreds of
 * requests; the contract's 60 per minute would only make the tests wait).
 */
export async function startExampleServer(ratePerMinute = 100_000): Promise<ExampleServer> {
  process.env.RATE_LIMIT_PER_MINUTE = String(ratePerMinute);
  let server: RunningServer;
  try {
    server = await startServer(testConfig({ seedDemo: true }));
  } finally {
    delete process.env.RATE_LIMIT_PER_MINUTE;
  }
  const apiKey = server.demoApiKey!;
  return { server, url: server.url, apiKey, client: new Stageline({ baseUrl: server.url, apiKey }) };
}

/** A running example script. */
export interface ExampleRun {
  child: ChildProcess;
  /** Everything written to stdout so far. */
  stdout(): string;
  /** Everything written to stderr so far. */
  stderr(): string;
  /** Resolves with the first stdout line matching `pattern` (waiting up to `timeoutMs`). */
  line(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Resolves with the exit code (null when killed by a signal) once the process has exited. */
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Runs `node --import tsx <script> ...args` in client/examples with `env` added (NODE_OPTIONS of the test runner
 * removed). One process, the script's own (the `tsx` command would run it in a child of its own, which a SIGKILL
 * of the command would leave running).
 */
export function runExample(script: string, args: string[], env: Record<string, string>): ExampleRun {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  delete childEnv.NODE_OPTIONS;
  const child = spawn(process.execPath, ["--import", "tsx", script, ...args], { cwd: EXAMPLES_DIR, env: childEnv, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once("close", (code: number | null, signal: NodeJS.Signals | null) => resolve({ code, signal })));
  const line = (pattern: RegExp, timeoutMs = 20_000) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const found = out.split("\n").find((l) => pattern.test(l));
        if (found === undefined) return false;
        cleanup();
        resolve(found);
        return true;
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`${script}: no line matching ${pattern} within ${timeoutMs} ms\nstdout:\n${out}\nstderr:\n${err}`));
      }, timeoutMs);
      const onExit = () => {
        if (check()) return;
        cleanup();
        reject(new Error(`${script} exited before printing a line matching ${pattern}\nstdout:\n${out}\nstderr:\n${err}`));
      };
      const cleanup = () => {
        clearTimeout(timer);
        child.stdout!.off("data", check);
        child.off("close", onExit);
      };
      if (check()) return;
      child.stdout!.on("data", check);
      child.once("close", onExit);
    });
  return { child, stdout: () => out, stderr: () => err, line, exit };
}

/** The environment the client examples read (CONTRACT: the client adds /v1/ext to the origin). */
export function clientEnv(s: ExampleServer): Record<string, string> {
  return { STAGELINE_URL: s.url, STAGELINE_API_KEY: s.apiKey };
}
