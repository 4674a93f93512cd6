/**
 * A real Stageline server for the opt-in n8n run: the repository's built server (`server/dist/main.js`, run with
 * the Node running this script) on an ephemeral loopback port, `NODE_ENV=test` (so n8n's `http://127.0.0.1` webhook
 * URLs are accepted as targets, README "Configuration"), seeded with the demo company, whose all-scope key it prints.
 * Storage: a fresh PGlite folder, or a fresh schema (`t_n8n_...`) of `TEST_DATABASE_URL` when that is set.
 *
 * This package never imports server code: the server is a child process reached over HTTP, as n8n reaches it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { stopChild } from "./processes";

const REPO_ROOT = path.resolve(__dirname, "..", "..");
const SERVER_MAIN = path.join(REPO_ROOT, "server", "dist", "main.js");
const START_TIMEOUT_MS = 60_000;

/** A running Stageline server. */
export interface StagelineServer {
  /** Base URL, e.g. http://127.0.0.1:43121 (the credential's Base URL). */
  url: string;
  /** The demo company's all-scope API key. */
  apiKey: string;
  /** Which database it runs on, for the summary. */
  database: string;
  /** Everything the process wrote (for failure messages). */
  output(): string;
  /** Stops the process and removes its data folder. */
  stop(): Promise<void>;
}

/**
 * Starts the built server; resolves when it printed `Demo API key: <key>` and `Stageline listening on <url> (`.
 * @throws Error with the server's output when `server/dist` is missing, or the server exits or is silent for 60 s.
 */
export async function startStageline(): Promise<StagelineServer> {
  if (!fs.existsSync(SERVER_MAIN)) throw new Error(`${SERVER_MAIN} is missing: run "npm run build" at the repository root first.`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "stageline-n8n-e2e-"));
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: "0", HOST: "127.0.0.1", NODE_ENV: "test", DATA_DIR: dataDir, SEED_DEMO: "true" };
  delete env.DATABASE_URL;
  delete env.LOG_LEVEL;
  const pg = process.env.TEST_DATABASE_URL;
  if (pg) env.DATABASE_URL = `${pg}${pg.includes("?") ? "&" : "?"}schema=t_n8n_${Date.now().toString(36)}_${crypto.randomBytes(3).toString("hex")}`;
  const child: ChildProcess = spawn(process.execPath, [SERVER_MAIN], { cwd: REPO_ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  const stop = async (): Promise<void> => {
    await stopChild(child);
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const found = await new Promise<{ url: string; apiKey: string }>((resolve, reject) => {
      let apiKey: string | undefined;
      const timer = setTimeout(() => reject(new Error("Stageline did not start within 60 s.")), START_TIMEOUT_MS);
      child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
        output += chunk;
        apiKey ??= /^Demo API key: (\S+)$/m.exec(output)?.[1];
        const url = /^Stageline listening on (\S+) \(/m.exec(output)?.[1];
        if (url && apiKey) {
          clearTimeout(timer);
          resolve({ url, apiKey });
        }
      });
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`Stageline exited during start-up (code ${code}).`));
      });
    });
    return { ...found, database: pg ? "PostgreSQL (TEST_DATABASE_URL, own schema)" : "embedded PGlite", output: () => output, stop };
  } catch (err) {
    await stop();
    throw new Error(`${(err as Error).message}\n--- Stageline output ---\n${output}`);
  }
}

/**
 * Calls Stageline's external API with the demo key.
 * @returns the status and the parsed JSON body (null for 204).
 * @throws Error on a network failure.
 */
export async function stagelineApi(server: StagelineServer, method: string, apiPath: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}${apiPath}`, {
    method,
    headers: { "x-api-key": server.apiKey, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
