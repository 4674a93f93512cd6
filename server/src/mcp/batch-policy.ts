/**
 * The JSON-RPC batch policy of the MCP endpoint (docs/mcp-security.md; CONTRACT "MCP server": calls count against the
 * key's rate limit):
 * - Which revisions take a batch: MCP 2025-03-26 had JSON-RPC batching, 2025-06-18 removed it ("Remove support for
 *   JSON-RPC batching", changelog of 2025-06-18) and no later revision brought it back. The revision of a POST is its
 *   `MCP-Protocol-Version` header; without one a server assumes 2025-03-26 (MCP 2025-06-18 "Protocol Version
 *   Header"), so a batch without the header is taken as 2025-03-26. A batch under any other revision (an unknown one
 *   included) is refused: `400` with a JSON-RPC `-32600 Invalid Request` error without id (MCP "Streamable HTTP":
 *   input the server cannot accept is an HTTP error status, its body MAY be a JSON-RPC error response without id).
 * - What a message costs: every JSON-RPC request message (a `method` and an `id`) is one unit of the key's rate
 *   limit; notifications and responses cost nothing beyond the HTTP request's own unit. A single message is one
 *   unit, counted by the key lookup as before.
 */
/** Revisions whose Streamable HTTP (or earlier) transport allowed JSON-RPC batches. */
export const BATCH_REVISIONS: readonly string[] = ["2024-10-07", "2024-11-05", "2025-03-26"];

/** At most this many messages in one batch (the SDK's own bound, `MAX_BATCH_SIZE`). */
export const MAX_BATCH_MESSAGES = 100;

/** What a POST body holds, for the rate limit. */
export interface MessageCount {
  /** JSON-RPC request messages (each one unit). */
  requests: number;
  /** Of those, `tools/call` requests. */
  toolCalls: number;
}

/** Whether `message` is a JSON-RPC request (a `method` and an `id`; a notification has no `id`). */
function isRequest(message: unknown): message is { method: string } {
  return typeof message === "object" && message !== null && typeof (message as { method?: unknown }).method === "string" && "id" in message;
}

/** Counts the request messages of a parsed POST body (a single message or a batch array). */
export function countMessages(body: unknown): MessageCount {
  const messages = Array.isArray(body) ? body : [body];
  const requests = messages.filter(isRequest);
  return { requests: requests.length, toolCalls: requests.filter((m) => m.method === "tools/call").length };
}

/**
 * Why the batch `body` is refused under the request's `MCP-Protocol-Version` header `revision`, or null when `body`
 * is no batch or a batch the revision allows (of at most MAX_BATCH_MESSAGES messages).
 */
export function batchRefusal(body: unknown, revision: string | undefined): string | null {
  if (!Array.isArray(body)) return null;
  const effective = revision ?? "2025-03-26";
  if (!BATCH_REVISIONS.includes(effective)) {
    return `Invalid Request: JSON-RPC batches are not supported under MCP protocol revision ${effective} (removed in 2025-06-18); send one message per request.`;
  }
  if (body.length > MAX_BATCH_MESSAGES) return `Invalid Request: Batch must not exceed ${MAX_BATCH_MESSAGES} messages.`;
  return null;
}

