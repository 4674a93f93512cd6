/**
 * Test helper: the tools/list a client sees, from a real McpServer connected to the SDK's client over the SDK's
 * in-memory transport (no Stageline server: listing calls no operation).
 */
import { Client } from "@modelcontextprotocol/client";
import { InMemoryTransport } from "@modelcontextprotocol/server";
import { SCOPES } from "@stageline/shared";
import { createStagelineMcpServer, type StagelineOperations, type ToolAccess } from "../src";

/** Operations that must not be called (tools/list needs none). */
const NO_OPERATIONS = new Proxy({} as StagelineOperations, {
  get: (_t, name) => () => Promise.reject(new Error(`unexpected operation ${String(name)}`)),
});

/** The `tools/list` result for `access` (default: every scope, default toolsets). */
export async function listedTools(access: Partial<ToolAccess> = {}) {
  const server = createStagelineMcpServer(NO_OPERATIONS, { scopes: [...SCOPES], ...access });
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "test", version: "1.0.0" });
  await client.connect(clientSide);
  try {
    return await client.listTools();
  } finally {
    await client.close();
    await server.close();
  }
}
