/**
 * Issue 26: the stdio program `stageline-mcp` (mcp/bin, the bundle of mcp/scripts/bundle.mjs) spawned by the SDK's
 * own client (`StdioClientTransport`) against a real server, with the key and server in STAGELINE_API_KEY and
 * STAGELINE_BASE_URL and the options as `--read-only` / `--toolsets`: the shared conformance suite
 * (conformance.ts), and what only the program has: its stderr never holds the key; a missing key or an unknown
 * option exits non-zero with a message.
 */
import { execFile, execFileSync } from "node:child_process";
import path from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { startTestServerWithRateLimit, type TestServer } from "../../server/test/helpers/test-server";
import { call, conformanceSuite, type Connect } from "./conformance";

const MCP = path.resolve(__dirname, "..", "..", "mcp");
const BIN = path.join(MCP, "bin", "stageline-mcp.js");

/** The environment the program gets: no npm or test variables, just PATH, the key and the server. */
function programEnv(apiKey: string, baseUrl: string): Record<string, string> {
  return { PATH: process.env.PATH ?? "", STAGELINE_API_KEY: apiKey, STAGELINE_BASE_URL: baseUrl };
}

let t: TestServer;
const stderrs: string[] = [];
const stdioConnect: Connect = async (apiKey, options = {}) => {
  const args = [BIN];
  if (options.readOnly) args.push("--read-only");
  if (options.toolsets) args.push("--toolsets", options.toolsets);
  const transport = new StdioClientTransport({ command: process.execPath, args, env: programEnv(apiKey, t.url), stderr: "pipe" });
  const index = stderrs.push("") - 1;
  transport.stderr?.on("data", (chunk: Buffer) => (stderrs[index] += chunk.toString("utf8")));
  const client = new Client({ name: "conformance", version: "1.0.0" });
  await client.connect(transport);
  return client;
};

beforeAll(async () => {
  execFileSync(process.execPath, [path.join(MCP, "scripts", "bundle.mjs")], { stdio: "pipe" });
  t = await startTestServerWithRateLimit(100_000);
}, 60_000);
afterAll(async () => {
  await t?.close();
});

describe("over stdio (the spawned stageline-mcp bin)", () => {
  conformanceSuite(() => ({ t, connect: stdioConnect }));

  it("serves the 2026-07-28 revision too", async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN], env: programEnv(t.apiKey, t.url), stderr: "pipe" });
    const client = new Client({ name: "modern", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
    await client.connect(transport);
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
      expect((await call(client, "describe_pipelines")).isError).toBeFalsy();
    } finally {
      await client.close();
    }
  });

  it("never writes the key to stderr", () => {
    expect(stderrs.length).toBeGreaterThan(3);
    for (const text of stderrs) expect(text).not.toMatch(/sl_[A-Za-z0-9]/);
  });
});

describe("the command line", () => {
  /** Runs the program asynchronously (the test server answers from this process's event loop). */
  const run = (args: string[], env: Record<string, string>) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(process.execPath, [BIN, ...args], { env, encoding: "utf8", timeout: 30_000 }, (err, stdout, stderr) =>
        resolve({ status: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }),
      );
      child.stdin?.end();
    });

  it("exits 2 without STAGELINE_API_KEY or with an unknown option, 1 for a key the server refuses (not echoing it)", async () => {
    const noKey = await run([], { PATH: process.env.PATH ?? "" });
    expect(noKey.status).toBe(2);
    expect(noKey.stderr).toMatch(/STAGELINE_API_KEY is not set/);
    const unknown = await run(["--write-everything"], programEnv(t.apiKey, t.url));
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/Unknown option "--write-everything"/);
    const badToolset = await run(["--toolsets=secrets"], programEnv(t.apiKey, t.url));
    expect(badToolset.stderr).toMatch(/Unknown toolset "secrets"/);
    const refused = await run([], programEnv("sl_wrong_key_0123456789", t.url));
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/invalid_api_key: .*; request req_[A-Za-z0-9_-]{22}\)/);
    expect(refused.stderr).not.toContain("sl_wrong_key");
  });

  it("prints its usage with --help", async () => {
    const help = await run(["--help"], { PATH: process.env.PATH ?? "" });
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Usage: stageline-mcp/);
  });
});
