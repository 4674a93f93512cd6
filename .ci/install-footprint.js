#!/usr/bin/env node
/**
 * `node .ci/install-footprint.js`: what `npm install` brings per workspace (docs/testing.md "What npm install
 * brings"). For each workspace it walks package-lock.json from the workspace's dependencies (runtime alone, then with
 * its devDependencies) through every installed package's dependencies, optional and peer dependencies, resolving
 * names as Node does (nearest node_modules upwards), and sums the packages' sizes on disk (`du -sk`, without their
 * nested node_modules). A package shared by several workspaces counts in each. Reads only; needs an installed tree.
 *
 * `node .ci/install-footprint.js --summary` (what `.ci/run` prints after its install): only the totals, quickly:
 * the packages installed (lockfile entries present on disk, workspace links not counted) and the size on disk of
 * every node_modules folder of the install (`du -sk`, hard links counted once), in MB.
 *
 * `--dir <folder>` (with or without `--summary`): the same for the install of another folder with its own
 * package-lock.json, such as `--dir n8n` (the n8n package's own install, `npm run test:n8n`).
 */
const fs = require("node:fs");
const path = require("node:path");
const { execFileSync } = require("node:child_process");

const dirArg = process.argv.indexOf("--dir");
const root = path.resolve(__dirname, "..", dirArg > 0 ? process.argv[dirArg + 1] : ".");
const label = dirArg > 0 ? `${process.argv[dirArg + 1]} ` : "";
const lock = JSON.parse(fs.readFileSync(path.join(root, "package-lock.json"), "utf8")).packages;

/** The lockfile key of `name` as required from the package at `fromKey` (workspace links followed). */
function resolve(fromKey, name) {
  let dir = fromKey;
  for (;;) {
    const key = (dir ? `${dir}/` : "") + `node_modules/${name}`;
    if (lock[key]) return lock[key].link ? lock[key].resolved : key;
    if (!dir) return null;
    const i = dir.lastIndexOf("/node_modules/");
    dir = i >= 0 ? dir.slice(0, i) : "";
  }
}

const sizes = new Map();
/** Size on disk of one installed package in kB (0 when not installed on this platform). */
function sizeKb(key) {
  if (!sizes.has(key)) {
    let kb = 0;
    try {
      kb = Number(execFileSync("du", ["-sk", "--exclude=node_modules", path.join(root, key)], { stdio: ["ignore", "pipe", "ignore"] }).toString().split("\t")[0]);
    } catch {
      /* an optional package of another platform */
    }
    sizes.set(key, kb);
  }
  return sizes.get(key);
}

/** Installed packages reached from workspace `wsKey` through the dependency kinds `kinds`. */
function closure(wsKey, kinds) {
  const seen = new Set();
  const stack = [];
  for (const kind of kinds) for (const name of Object.keys(lock[wsKey][kind] || {})) stack.push(resolve(wsKey, name));
  while (stack.length) {
    const key = stack.pop();
    if (!key || seen.has(key) || !lock[key]) continue;
    seen.add(key);
    for (const kind of ["dependencies", "optionalDependencies", "peerDependencies"]) {
      for (const name of Object.keys(lock[key][kind] || {})) stack.push(resolve(key, name));
    }
  }
  return [...seen].filter((key) => key.includes("node_modules/"));
}

/** Totals of the installed tree: packages present on disk and the size of its node_modules folders. */
function summary() {
  const installed = Object.keys(lock).filter((key) => key.includes("node_modules/") && !lock[key].link && fs.existsSync(path.join(root, key)));
  const folders = ["", ...(lock[""].workspaces || [])]
    .map((ws) => path.join(root, ws, "node_modules"))
    .filter((dir) => fs.existsSync(dir));
  const kb = Number(execFileSync("du", ["-sck", ...folders]).toString().trim().split("\n").pop().split("\t")[0]);
  console.log(`${label}install footprint: ${installed.length} packages, ${Math.round(kb / 1024)} MB in node_modules (${folders.length} folders)`);
}

if (process.argv.includes("--summary")) {
  summary();
  process.exit(0);
}

const mb = (keys) => Math.round(keys.reduce((sum, key) => sum + sizeKb(key), 0) / 1024);
const workspaces = ["", ...(lock[""].workspaces || [])];
console.log("workspace\truntime packages\truntime MB\twith dev packages\twith dev MB");
for (const ws of workspaces) {
  const runtime = closure(ws, ["dependencies"]);
  const all = closure(ws, ["dependencies", "devDependencies"]);
  console.log(`${ws || "(root)"}\t${runtime.length}\t${mb(runtime)}\t${all.length}\t${mb(all)}`);
}
const installed = Object.keys(lock).filter((key) => key.includes("node_modules/") && !lock[key].link);
console.log(`packages in package-lock.json: ${installed.length}`);
summary();
