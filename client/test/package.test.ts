/**
 * Issue 21 part 1: `npm pack` in client/ gives a tarball that installs into an empty folder and works there alone,
 * through ESM `import` and CommonJS `require` (Node 20+), with type declarations for both. The tarball's only
 * dependency (openapi-fetch) comes from npm's cache (`--prefer-offline`: no network when `npm ci` ran).
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const CLIENT = path.resolve(__dirname, "..");
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

describe("the packed @stageline/client in an empty folder", () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "stageline-client-pack-"));
    const tarball = run("npm", ["pack", "--silent", "--pack-destination", dir], CLIENT).trim().split("\n").pop()!;
    fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "consumer", private: true }));
    run("npm", ["install", path.join(dir, tarball), "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", "--no-package-lock"], dir);
    for (const file of fs.readdirSync(FIXTURES)) fs.copyFileSync(path.join(FIXTURES, file), path.join(dir, file));
  }, 60_000);
  afterAll(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
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
