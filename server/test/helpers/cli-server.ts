/**
 * A server on the embedded database in a temporary DATA_DIR, and the built admin CLI run against it (the CLI finds
 * the server through DATA_DIR/admin.json and goes through its admin API), for tests of admin CLI commands.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startServer, type RunningServer } from "../../src/server";
import { testConfig } from "./test-server";

/** What `useCliServer` gives a describe block once its beforeAll has run. */
export interface CliServer {
  server: RunningServer;
  dataDir: string;
  /** Runs `node server/dist/admin/cli.js ...args` with DATA_DIR set (no DATABASE_URL): its exit code and output. */
  run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
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
    const cli = path.resolve(__dirname, "../../dist/admin/cli.js");
    return new Promise((resolve) => {
      execFile(process.execPath, [cli, ...args], { env: vars }, (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }));
    });
  };
  return env;
}
