/**
 * A real n8n for the opt-in run, headless on Node 24, with this package loaded from `N8N_CUSTOM_EXTENSIONS`
 * (node types `CUSTOM.stageline` and `CUSTOM.stagelineTrigger`). Environment as verified in
 * N8N.md "Running a real n8n": SQLite in a temporary user folder, no telemetry, no template or
 * version calls, `mcp-registry` disabled (it calls n8n's servers at start-up), a free task-broker port per process.
 */
import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { freePort, ownGroup, stopChild } from "./processes";
import type { Runtime } from "./runtime";

const READY_TIMEOUT_MS = 120_000;
const CLI_TIMEOUT_MS = 180_000;

/** One n8n installation state: a user folder (database, config) and the port it serves on. */
export interface N8nHome {
  runtime: Runtime;
  /** N8N_USER_FOLDER. */
  userFolder: string;
  /** The package's dist folder (N8N_CUSTOM_EXTENSIONS). */
  extensions: string;
  port: number;
}

/** The base URL n8n serves the editor, REST API and webhooks on. */
export function n8nUrl(home: N8nHome): string {
  return `http://127.0.0.1:${home.port}`;
}

/** The environment of every n8n process of `home`; a fresh broker port each time. */
async function n8nEnv(home: N8nHome): Promise<NodeJS.ProcessEnv> {
  return {
    ...process.env,
    PATH: `${path.dirname(home.runtime.node)}${path.delimiter}${process.env.PATH ?? ""}`,
    NODE_OPTIONS: "",
    N8N_USER_FOLDER: home.userFolder,
    N8N_CUSTOM_EXTENSIONS: home.extensions,
    DB_TYPE: "sqlite",
    N8N_ENCRYPTION_KEY: "stageline-e2e-only-not-a-secret",
    N8N_DIAGNOSTICS_ENABLED: "false",
    N8N_VERSION_NOTIFICATIONS_ENABLED: "false",
    N8N_TEMPLATES_ENABLED: "false",
    N8N_PERSONALIZATION_ENABLED: "false",
    N8N_LISTEN_ADDRESS: "127.0.0.1",
    N8N_HOST: "127.0.0.1",
    N8N_PORT: String(home.port),
    N8N_WEBHOOK_URL: `${n8nUrl(home)}/`,
    N8N_SECURE_COOKIE: "false",
    N8N_RUNNERS_BROKER_PORT: String(await freePort()),
    N8N_DISABLED_MODULES: "mcp-registry",
    N8N_LOG_LEVEL: process.env.E2E_N8N_LOG_LEVEL ?? "warn",
  };
}

/**
 * Runs one n8n command (e.g. `import:workflow --input=...`) to its end; `extraEnv` last (e.g. a log level:
 * `n8n execute` prints its result through the logger at level info).
 * @returns its exit code and output.
 */
export async function n8nCli(home: N8nHome, args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<{ code: number; output: string }> {
  const env = { ...(await n8nEnv(home)), ...extraEnv };
  return new Promise((resolve) => {
    execFile(home.runtime.node, [home.runtime.n8nBin, ...args], { env, timeout: CLI_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === "number" ? (err as { code: number }).code : 1) : 0;
      resolve({ code, output: `${stdout}${stderr}` });
    });
  });
}

/** Like {@link n8nCli}. @throws Error with the output when the command fails. */
export async function n8nCliOk(home: N8nHome, args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<string> {
  const { code, output } = await n8nCli(home, args, extraEnv);
  if (code !== 0) throw new Error(`n8n ${args.join(" ")} exited with ${code}:\n${output}`);
  return output;
}

/** A running `n8n start`. */
export interface N8nServer {
  output(): string;
  /** SIGTERM to n8n and its task runner (its process group), SIGKILL after 20 s. */
  stop(): Promise<void>;
}

/**
 * Starts `n8n start` and waits for `GET /healthz/readiness` to answer 200 (about 5-15 s).
 * @throws Error with n8n's output when it exits or is not ready within 120 s.
 */
export async function startN8n(home: N8nHome): Promise<N8nServer> {
  const log = fs.openSync(path.join(home.userFolder, "n8n-start.log"), "a");
  const child = ownGroup(spawn(home.runtime.node, [home.runtime.n8nBin, "start"], { env: await n8nEnv(home), detached: true, stdio: ["ignore", log, log] }));
  fs.closeSync(log);
  const output = (): string => fs.readFileSync(path.join(home.userFolder, "n8n-start.log"), "utf8");
  const server = { output, stop: () => stopChild(child, 20_000) };
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`n8n exited during start-up (code ${child.exitCode}):\n${output()}`);
    try {
      const res = await fetch(`${n8nUrl(home)}/healthz/readiness`);
      if (res.status === 200) return server;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  await server.stop();
  throw new Error(`n8n was not ready within ${READY_TIMEOUT_MS / 1000} s:\n${output()}`);
}
