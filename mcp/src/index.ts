/**
 * @stageline/mcp as a library: the Stageline MCP tools, defined once (CONTRACT "MCP server"). The server serves them
 * at /v1/ext/mcp with an in-process `StagelineOperations`; the stdio program (cli.ts) with `ClientOperations`.
 */
export * from "./operations";
export * from "./tool-definition";
export * from "./tool-schema";
export * from "./registry";
export * from "./mcp-server";
export { DEFAULT_TOOL_LIMIT, MAX_TOOL_LIMIT } from "./tools/paging";
