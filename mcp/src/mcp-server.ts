/**
 * Builds the MCP server of one connection (MCP "Tools"; CONTRACT "MCP server"): the tools `access` allows, each
 * registered with title, description, the four annotations and input/output JSON Schemas rendered from the contract's
 * zod schemas; a call re-checks `access`, runs the tool against `StagelineOperations` and answers
 * `structuredContent` plus a one-line summary, or an `isError` result carrying the problem (`code`, `detail`,
 * `errors`; `retry_after_seconds` on `rate_limited`). The SDK (`@modelcontextprotocol/server`) speaks the protocol.
 */
import { McpServer, type CallToolResult } from "@modelcontextprotocol/server";
import { OperationError, type StagelineOperations, type ToolProblem } from "./operations";
import { allows, toolsFor, type ToolAccess } from "./registry";
import type { AnyTool } from "./tool-definition";
import { toolSchema } from "./tool-schema";

/** The server's name and version in `initialize` / `server/discover`. */
export const SERVER_INFO = { name: "stageline", title: "Stageline", version: "0.1.0" } as const;

/** Told to the agent once per connection (MCP `instructions`). */
export const INSTRUCTIONS =
  "Stageline holds pipelines (stages, statuses, custom fields), items moving through them with their notes, tasks, and the company's users. Call describe_pipelines first for the ids; list_events tells what changed since an event; errors carry a code (e.g. version_conflict, rate_limited with retry_after_seconds).";

/** An `isError` result for `problem` (its JSON as the text, so every client shows the code and detail). */
export function errorResult(problem: ToolProblem): CallToolResult {
  return { isError: true, content: [{ type: "text", text: JSON.stringify(problem) }] };
}

/**
 * Runs `tool` for a connection with `access`: the access is checked again (a tool may have been listed under other
 * scopes), an `OperationError` becomes an `isError` result, any other failure an `internal` one (its message is
 * not passed on: it may hold a URL or a secret).
 */
export async function callTool(ops: StagelineOperations, access: ToolAccess, tool: AnyTool, args: unknown): Promise<CallToolResult> {
  if (!allows(access, tool)) {
    return errorResult({ code: "insufficient_scope", detail: `This API key (or this connection's options) does not allow ${tool.name}.` });
  }
  try {
    const result = await tool.run(ops, args);
    return { content: [{ type: "text", text: tool.summary(result) }], structuredContent: result };
  } catch (err) {
    if (err instanceof OperationError) return errorResult(err.problem);
    return errorResult({ code: "internal", detail: "The tool failed unexpectedly; try again later." });
  }
}

/** What else decides which tools one server instance registers. */
export interface ServerScope {
  /**
   * The one tool this instance will be asked to call: a stateless HTTP request that carries a single `tools/call`
   * is served by a fresh instance that answers nothing else, so only that tool is registered (if `access` allows it;
   * an unknown or refused name is then answered exactly as with every tool registered: the SDK's unknown-tool
   * error). Registering every tool costs about 5% of an in-process `tools/call` (issue 33;
   * bench/results/issue33-mcp.md). Undefined: every tool `access` allows (tools/list, batches, stdio).
   */
  onlyTool?: string | undefined;
  /**
   * Told of every tool call once it is answered (the server's request log, issue 40): the tool's name, the arguments
   * as received (the observer keeps what it may: ids, never values), how long it took in ms, and the problem of an
   * error answer (null on success). Must not throw.
   */
  onToolCall?: ((call: ToolCallRecord) => void) | undefined;
}

/** One answered tool call, as `ServerScope.onToolCall` hears of it. */
export interface ToolCallRecord {
  tool: string;
  args: unknown;
  durationMs: number;
  problem: ToolProblem | null;
}

/** The problem of an `isError` result made by `errorResult` (null for anything else). */
function problemOf(result: CallToolResult): ToolProblem | null {
  if (!result.isError) return null;
  const first = result.content[0];
  try {
    return first?.type === "text" ? (JSON.parse(first.text) as ToolProblem) : null;
  } catch {
    return null;
  }
}

/**
 * A fresh McpServer with the tools `access` allows (only `scope.onlyTool` of them when given), calling `ops`.
 * @param ops the operations of this connection's API key (in-process in the server, over HTTP in stageline-mcp).
 */
export function createStagelineMcpServer(ops: StagelineOperations, access: ToolAccess, scope: ServerScope = {}): McpServer {
  const server = new McpServer(SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  const tools = scope.onlyTool === undefined ? toolsFor(access) : toolsFor(access).filter((tool) => tool.name === scope.onlyTool);
  for (const tool of tools) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        annotations: { title: tool.title, ...tool.annotations },
        inputSchema: toolSchema(tool.input),
        outputSchema: toolSchema(tool.output, "output"),
      },
      async (args: unknown) => {
        const started = performance.now();
        const result = await callTool(ops, access, tool, args);
        scope.onToolCall?.({ tool: tool.name, args, durationMs: performance.now() - started, problem: problemOf(result) });
        return result;
      },
    );
  }
  return server;
}
