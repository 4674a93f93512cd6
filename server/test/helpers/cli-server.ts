/**
 * A server on the embedded database in a temporary DATA_DIR, and the admin CLI run against it (the CLI finds the
 * server through DATA_DIR/admin.json and goes through its admin API), for tests of admin CLI commands. The CLI runs
 * in this process through its entry point `runCli(argv, io)` (server/src/admin/cli.ts), not as a cold Node child
 * per command; server/test/admin-cli.test.ts keeps the tests of the built CLI as a real process.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { runCli } from "../../src/admin/cli";
import { startServer, type RunningServer } from "../../src/server";
import { testConfig } from "./test-server";

/** What `useCliServer` gives a describe block once its beforeAll has run. */
export interface CliServer {
  server: RunningServer;
  dataDir: string;
  /** Runs the admin CLI command `args` with DATA_DIR set (no DATABASE_URL): its exit code and output. */
  run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
}

/**
 * Runs one admin CLI command in this process (`runCli` of server/src/admin/cli.ts) with `env` as its environment
 * and `cwd` as its working directory: its exit code and what it wrote to stdout and stderr. An error escaping
 * `runCli` is reported as the built CLI's entry point does it (`Error: message` on stderr, exit code 1).
 */
export async function runCliInProcess(args: string[], env: NodeJS.ProcessEnv, cwd: string = process.cwd()): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const io = { stdout: (text: string) => void (stdout += text), stderr: (text: string) => void (stderr += text), env, cwd };
  try {
    return { code: await runCli(args, io), stdout, stderr };
  } catch (err) {
    return { code: 1, stdout, stderr: `${stderr}Error: ${err instanceof Error ? err.message : String(err)}\n` };
  }
}

/** Registers beforeAll/afterAll that start and stop a server in a fresh temporary DATA_DIR. */
export function useCliServer(): CliServer {
  const env = {} as CliServer;
  beforeAll(async () => {
    env.dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "stageline-cli-"));
    env.server = await startServer({ ...testConfig(), dataDir: env.dataDir, databaseUrl: undefined });
  });
  afterAll(async () => {
    await env.server?.close();
    fs.rmSync(env.dataDir, { recursive: true, force: true });
  });
  env.run = (args) => {
    const vars: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: env.dataDir, NODE_ENV: "test" };
    delete vars.DATABASE_URL;
    delete vars.INIT_CWD;
    return runCliInProcess(args, vars);
  };
  return env;
}
