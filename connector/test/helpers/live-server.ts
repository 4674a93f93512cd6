/**
 * A real Stageline server for the connector's live tests: the built server (`server/dist/main.js`) as a child
 * process on an ephemeral port, with a fresh data directory (embedded PGlite) or, when TEST_DATABASE_URL is set, a
 * fresh PostgreSQL schema (`t_zap_...`, dropped by CI with the other `t_` schemas). The server seeds the demo
 * company (Sales pipeline: stages Lead, Qualified, Proposal, Closed; statuses Open, Won, Lost; custom fields email
 * and deal_value; duplicate detection on email) and prints its key; this helper reads the key and URL from stdout.
 *
 * The connector never imports server code: it talks to the server over HTTP only, like Zapier would.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The repository root (connector/test/helpers -> ../../..). */
const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');
const SERVER_MAIN = path.join(REPO_ROOT, 'server', 'dist', 'main.js');
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 15_000;

/** A running server. */
export interface LiveServer {
  /** Base URL, e.g. http://127.0.0.1:43121 (what a user would enter as "Server URL"). */
  url: string;
  /** The demo company's all-scope API key. */
  apiKey: string;
  /** The server's DATA_DIR (with the embedded database, the admin CLI reaches the running server through it). */
  dataDir: string;
  /** The server's DATABASE_URL (PostgreSQL, its own schema), or undefined on the embedded database. */
  databaseUrl: string | undefined;
  /** Everything the process wrote so far (for failure messages). */
  output(): string;
  /** SIGTERM, wait for the exit (SIGKILL after 15 s), remove the data directory. */
  stop(): Promise<void>;
}

let built = false;

/**
 * Brings `server/dist` up to date with `tsc -b server` (a quick no-op when the root build already ran), so the
 * live tests never run against a stale or missing build, e.g. under `zapier-platform test` in connector/.
 * @throws Error with the compiler output when the server does not compile.
 */
export function ensureServerBuilt(): void {
  if (built) return;
  const tsc = require.resolve('typescript/bin/tsc', { paths: [REPO_ROOT] });
  try {
    execFileSync(process.execPath, [tsc, '-b', path.join(REPO_ROOT, 'server')], { cwd: REPO_ROOT, stdio: 'pipe' });
  } catch (err) {
    const e = err as { stdout?: Buffer; stderr?: Buffer };
    throw new Error(`The Stageline server does not build (tsc -b server):\n${e.stdout?.toString() ?? ''}${e.stderr?.toString() ?? ''}`);
  }
  if (!fs.existsSync(SERVER_MAIN)) throw new Error(`${SERVER_MAIN} is missing after building the server.`);
  built = true;
}

/** Environment of the child: test mode, loopback, ephemeral port, fresh storage; `extra` last (e.g. a rate limit). */
function serverEnv(dataDir: string, extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.DATABASE_URL;
  delete env.SEED_DEMO;
  delete env.LOG_LEVEL;
  Object.assign(env, { PORT: '0', HOST: '127.0.0.1', NODE_ENV: 'test', DATA_DIR: dataDir, SEED_DEMO: 'true' });
  const pgUrl = process.env.TEST_DATABASE_URL;
  if (pgUrl) {
    const schema = `t_zap_${Date.now().toString(36)}_${crypto.randomBytes(4).toString('hex')}`;
    env.DATABASE_URL = `${pgUrl}${pgUrl.includes('?') ? '&' : '?'}schema=${schema}`;
  }
  return Object.assign(env, extra);
}

/** Waits for the process to exit, up to `ms`; true when it exited. */
function exited(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/**
 * Builds (if needed) and starts the server; resolves once it printed `Demo API key: <key>` and
 * `Stageline listening on <url> (...)`.
 * @param extraEnv more environment for the child (e.g. `{ RATE_LIMIT_PER_MINUTE: '2' }`).
 * @throws when the process exits or stays silent for 60 s; the error carries its output.
 */
export async function startLiveServer(extraEnv: Record<string, string> = {}): Promise<LiveServer> {
  ensureServerBuilt();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stageline-zapier-'));
  const env = serverEnv(dataDir, extraEnv);
  const child = spawn(process.execPath, [SERVER_MAIN], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.setEncoding('utf8');
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => (output += chunk));

  const stop = async (): Promise<void> => {
    if (!(await exited(child, 0))) {
      child.kill('SIGTERM');
      if (!(await exited(child, STOP_TIMEOUT_MS))) {
        child.kill('SIGKILL');
        await exited(child, STOP_TIMEOUT_MS);
      }
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  };

  try {
    const { url, apiKey } = await new Promise<{ url: string; apiKey: string }>((resolve, reject) => {
      let apiKey: string | undefined;
      let buffered = '';
      const timer = setTimeout(() => reject(new Error(`The server did not start within ${START_TIMEOUT_MS / 1000} s.`)), START_TIMEOUT_MS);
      child.stdout!.on('data', (chunk: string) => {
        output += chunk;
        buffered += chunk;
        let newline: number;
        while ((newline = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, newline).trim();
          buffered = buffered.slice(newline + 1);
          const key = /^Demo API key: (\S+)$/.exec(line);
          if (key) apiKey = key[1];
          const listening = /^Stageline listening on (\S+) \(/.exec(line);
          if (listening) {
            clearTimeout(timer);
            if (apiKey === undefined) reject(new Error('The server started without printing "Demo API key: <key>" (was the database empty?).'));
            else resolve({ url: listening[1]!, apiKey });
          }
        }
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`The server exited during start-up (code ${code}, signal ${signal}).`));
      });
      child.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
    return { url, apiKey, dataDir, databaseUrl: env.DATABASE_URL, output: () => output, stop };
  } catch (err) {
    await stop();
    throw new Error(`${(err as Error).message}\n--- server output ---\n${output}`);
  }
}

/**
 * Runs the admin CLI (`npm run admin -- ...args`) against `server`'s database: through the running server on the
 * embedded database (its DATA_DIR), or directly on its PostgreSQL schema.
 * @returns the exit status and what it printed.
 */
export function runAdminCli(server: LiveServer, args: string[]): { status: number | null; stdout: string; stderr: string } {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: server.dataDir };
  delete env.DATABASE_URL;
  if (server.databaseUrl) env.DATABASE_URL = server.databaseUrl;
  const result = spawnSync(process.execPath, [path.join(REPO_ROOT, 'server', 'dist', 'admin', 'cli.js'), ...args], { cwd: REPO_ROOT, env, encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}
