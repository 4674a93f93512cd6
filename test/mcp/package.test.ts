/**
 * Issue 26 part 6: `npm pack` of mcp/ gives a tarball that installs into an empty folder (its dependencies, the MCP
 * SDK and zod, from npm's cache: `--prefer-offline`) and runs there as `npx stageline-mcp` with STAGELINE_API_KEY
 * and STAGELINE_BASE_URL, answering the SDK's client over stdio against a real server. Issue 39: the tarball is made
 * by `npm run pack`'s script (`scripts/pack.mjs --only mcp`) into a temporary folder, as the docs tell users to.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { startTestServer, type TestServer } from "../../server/test/helpers/test-server";
import { call } from "./conformance";

const REPO = path.resolve(__dirname, "..", "..");
const PACK = path.join(REPO, "scripts", "pack.mjs");
const run = promisify(execFile);

/** The environment without npm's per-run settings (a jest started by `npm test` would pass on its workspace). */
function cleanEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => !e[0].toLowerCase().startsWith("npm_") && e[1] !== undefined));
}

let dir: string;
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "stageline-mcp-pack-"));
  await run(process.execPath, [PACK, "--only", "mcp", "--out", path.join(dir, "artefacts")], { cwd: REPO, env: cleanEnv() });
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "consumer", private: true }));
  await run("npm", ["install", path.join(dir, "artefacts", "stageline-mcp-0.1.0.tgz"), "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", "--no-package-lock"], { cwd: dir, env: cleanEnv() });
}, 180_000);
afterAll(async () => {
  await t?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe("the packed @stageline/mcp in an empty folder", () => {
  it("holds the bin, the bundle, the README and package.json, and depends on the MCP SDK and zod alone", () => {
    const installed = path.join(dir, "node_modules", "@stageline", "mcp");
    const pkg = JSON.parse(fs.readFileSync(path.join(installed, "package.json"), "utf8"));
    expect(pkg).toMatchObject({ name: "@stageline/mcp", bin: { "stageline-mcp": "bin/stageline-mcp.js" } });
    expect(pkg.dependencies).toEqual({ "@modelcontextprotocol/server": "2.4.0", zod: "4.3.6" });
    expect(fs.readdirSync(installed).sort()).toEqual(["README.md", "bin", "dist-bundle", "package.json"]);
  });

  it("runs as npx stageline-mcp and serves the tools", async () => {
    const transport = new StdioClientTransport({
      command: "npx",
      args: ["--no-install", "stageline-mcp"],
      cwd: dir,
      env: { ...cleanEnv(), STAGELINE_API_KEY: t.apiKey, STAGELINE_BASE_URL: t.url },
      stderr: "pipe",
    });
    const client = new Client({ name: "packed", version: "1.0.0" });
    await client.connect(transport);
    try {
      expect((await client.listTools()).tools.map((x) => x.name)).toContain("create_item");
      const described = await call(client, "describe_pipelines");
      expect(described.structuredContent).toMatchObject({ pipelines: [{ id: t.pipeline.id, name: "Sales" }] });
    } finally {
      await client.close();
    }
  }, 60_000);
});
