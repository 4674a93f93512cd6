/**
 * `stageline-mcp`: the Stageline MCP tools over stdio (CONTRACT "MCP server"), for Claude Desktop, Claude Code,
 * Cursor and any MCP client that starts a local program. It reads the key's scopes (GET /v1/ext/me) once, then
 * serves the tools those scopes and the options allow with the SDK's `serveStdio` (2026-07-28 and the 2025
 * revisions), each call going to the API through @stageline/client. stdout carries only the protocol; messages go to
 * stderr and never contain the key, which is sent to STAGELINE_BASE_URL only.
 */
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { Stageline } from "@stageline/client";
import { createStagelineMcpServer } from "../mcp-server";
import { OperationError } from "../operations";
import { clientOperations, MAX_RATE_LIMIT_WAIT_MS } from "./client-operations";
import { parseCli, USAGE } from "./cli-options";

/** Starts the program; resolves once serving (the process then lives as long as stdin is open). */
export async function main(argv: readonly string[] = process.argv.slice(2), env: NodeJS.ProcessEnv = process.env): Promise<void> {
  let options;
  try {
    options = parseCli(argv, env);
  } catch (err) {
    process.stderr.write(`stageline-mcp: ${(err as Error).message}\n`);
    process.exitCode = 2;
    return;
  }
  if (options === "help") {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const origin = new URL(options.baseUrl).origin;
  const client = new Stageline({ apiKey: options.apiKey, baseUrl: options.baseUrl, maxRateLimitWaitMs: MAX_RATE_LIMIT_WAIT_MS });
  const ops = clientOperations(client, origin, { baseUrl: options.baseUrl, apiKey: options.apiKey });
  let scopes;
  try {
    scopes = await ops.scopes();
  } catch (err) {
    const request = err instanceof OperationError && err.problem.request_id ? `; request ${err.problem.request_id}` : "";
    const why = err instanceof OperationError ? `${err.problem.code}: ${err.problem.detail}${request}` : "unexpected error";
    process.stderr.write(`stageline-mcp: cannot use the API key with ${origin} (${why})\n`);
    process.exitCode = 1;
    return;
  }
  const access = { scopes, readOnly: options.readOnly, toolsets: options.toolsets };
  serveStdio(() => createStagelineMcpServer(ops, access), {
    onerror: (error) => process.stderr.write(`stageline-mcp: ${error.message}\n`),
  });
}
