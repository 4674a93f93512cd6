/**
 * Issue 21 part 1: the client's tarball installs into an empty folder and works there alone, through ESM `import` and
 * CommonJS `require` (Node 20+), with type declarations for both. The tarball's only dependency (openapi-fetch) comes
 * from npm's cache (`--prefer-offline`: no network when `npm ci` ran).
 * Issue 39: the tarball is made by `npm run pack`'s script (`scripts/pack.mjs --only client`, the command the docs tell
 * users to run) into a temporary artefact folder, with its SHA256SUMS, and nothing lands in the source tree.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const CLIENT = path.resolve(__dirname, "..");
const REPO = path.resolve(CLIENT, "..");
const PACK = path.join(REPO, "scripts", "pack.mjs");
const FIXTURES = path.join(__dirname, "fixtures", "consumer");
const TSC = require.resolve("typescript/bin/tsc");
const NODE_TYPES = path.dirname(path.dirname(require.resolve("@types/node/package.json")));

/** The environment without npm's per-run settings (a jest started by `npm test` would pass on its workspace). */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith("npm_")));
}

function run(cmd: string, args: string[], cwd: string): string {
  return execFileSync(cmd, args, { cwd, env: cleanEnv(), encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

/** `git status --porcelain` of the repository: tracked changes and untracked files, ignored ones aside. */
function gitStatus(): string {
  return run("git", ["status", "--porcelain"], REPO);
}

describe("the packed @stageline/client in an empty folder", () => {
  let dir: string;
  let artefacts: string;
  let statusBefore: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "stageline-client-pack-"));
    artefacts = path.join(dir, "artefacts");
    statusBefore = gitStatus();
    run(process.execPath, [PACK, "--only", "client", "--out", artefacts], REPO);
    fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "consumer", private: true }));
    const tarball = path.join(artefacts, "stageline-client-0.1.0.tgz");
    run("npm", ["install", tarball, "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", "--no-package-lock"], dir);
    for (const file of fs.readdirSync(FIXTURES)) fs.copyFileSync(path.join(FIXTURES, file), path.join(dir, file));
  }, 60_000);
  afterAll(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("npm run pack wrote the tarball and its checksum into the artefact folder, and nothing into the source tree", () => {
    expect(fs.readdirSync(artefacts).sort()).toEqual(["SHA256SUMS", "stageline-client-0.1.0.tgz"]);
    const sha256 = createHash("sha256").update(fs.readFileSync(path.join(artefacts, "stageline-client-0.1.0.tgz"))).digest("hex");
    expect(fs.readFileSync(path.join(artefacts, "SHA256SUMS"), "utf8")).toBe(`${sha256}  stageline-client-0.1.0.tgz\n`);
    expect(gitStatus()).toBe(statusBefore);
    expect(fs.readdirSync(CLIENT).filter((name) => name.endsWith(".tgz"))).toEqual([]);
  });

  it("holds only the build, the README and package.json, and depends on openapi-fetch alone", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(dir, "node_modules", "@stageline", "client", "package.json"), "utf8"));
    expect(pkg).toMatchObject({ name: "@stageline/client", version: "0.1.0", dependencies: { "openapi-fetch": "0.17.0" } });
    expect(Object.keys(pkg.dependencies)).toEqual(["openapi-fetch"]);
    const files = fs.readdirSync(path.join(dir, "node_modules", "@stageline", "client")).sort();
    expect(files).toEqual(["README.md", "dist", "package.json"]);
  });

  it.each(["smoke.mjs", "smoke.cjs"])("%s: calls a server, maps errors and verifies a webhook", (script) => {
    const out = JSON.parse(run(process.execPath, [script], dir));
    expect(out).toEqual({ me: "Acme", notFound: true, code: "not_found", webhook: "i1" });
  });

  it("ships type declarations for import and require", () => {
    const args = [TSC, "--noEmit", "--strict", "--module", "node16", "--moduleResolution", "node16", "--target", "es2022"];
    run(process.execPath, [...args, "--types", "node", "--typeRoots", NODE_TYPES, "types.mts", "types.cts"], dir);
  });
});
