/**
 * The JSON-RPC batch policy of the MCP endpoint (docs/mcp-security.md; CONTRACT "MCP server": calls count against the
 * key's rate limit):
 * - Which revisions take a batch: MCP 2025-03-26 had JSON-RPC batching, 2025-06-18 removed it ("Remove support for
 *   JSON-RPC batching", changelog of 2025-06-18) and no later revision brought it back. The revision of a POST is its
 *   `MCP-Protocol-Version` header; without one a server assumes 2025-03-26 (MCP 2025-06-18 "Protocol Version
 *   Header"), so a batch without the header is taken as 2025-03-26. A batch under any other revision (an unknown one
 *   included) is refused: `400` with a JSON-RPC `-32600 Invalid Request` error without id (MCP "Streamable HTTP":
 *   input the server cannot accept is an HTTP error status, its body MAY be a JSON-RPC error response without id).
 * - What a batch must be before anything runs or is reserved (issue 39 item 4): every element a JSON-RPC 2.0 message
 *   (the SDK's own predicates: request, notification, result or error response), no `initialize` beside other
 *   messages (MCP 2025-03-26 "Lifecycle": it MUST NOT be part of a batch), and every request's `id` a string or an
 *   integer (MCP "Requests": not null) that no other request of the batch uses (JSON-RPC 2.0 section 6: the client
 *   matches the answers by id; two requests sharing one id could both run while one answer comes back). The ids are
 *   compared as text, so `1` and `"1"` are the same id here. Otherwise `400` with JSON-RPC `-32600` saying which
 *   message, before the batch's units are reserved: a refused batch costs the HTTP request's one unit.
 * - What a message costs: every JSON-RPC request message (a `method` and an `id`) is one unit of the key's rate
 *   limit; notifications and responses cost nothing beyond the HTTP request's own unit. A single message is one
 *   unit, counted by the key lookup as before.
 */
import { isJSONRPCErrorResponse, isJSONRPCNotification, isJSONRPCRequest, isJSONRPCResultResponse } from "@modelcontextprotocol/server";

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
function isRequest(message: unknown): message is { method: string; id: unknown } {
  return typeof message === "object" && message !== null && typeof (message as { method?: unknown }).method === "string" && "id" in message;
}

/** Counts the request messages of a parsed POST body (a single message or a batch array). */
export function countMessages(body: unknown): MessageCount {
  const messages = Array.isArray(body) ? body : [body];
  const requests = messages.filter(isRequest);
  return { requests: requests.length, toolCalls: requests.filter((m) => m.method === "tools/call").length };
}

/** A request id as the refusal shows it (JSON, at most 40 characters). */
function shownId(id: unknown): string {
  const text = JSON.stringify(id) ?? String(id);
  return text.length > 40 ? `${text.slice(0, 40)}...` : text;
}

/** Why the messages of an allowed batch are refused (see the file comment), or null. Positions count from 0. */
function messagesRefusal(messages: unknown[]): string | null {
  if (messages.length === 0) return "Invalid Request: the batch is empty.";
  const seen = new Map<string, number>();
  for (const [i, message] of messages.entries()) {
    if (isRequest(message)) {
      const { id } = message;
      if (typeof id !== "string" && !Number.isSafeInteger(id)) {
        return `Invalid Request: batch message ${i} has the id ${shownId(id)}; every request of a batch needs a string or integer id its answer can be matched by.`;
      }
      const key = String(id);
      const first = seen.get(key);
      if (first !== undefined) return `Invalid Request: batch messages ${first} and ${i} share the id ${shownId(id)}; every request of a batch needs its own id. Nothing was run.`;
      seen.set(key, i);
      if (message.method === "initialize" && messages.length > 1) return `Invalid Request: batch message ${i} is initialize, which must be sent alone.`;
    }
    if (!(isJSONRPCRequest(message) || isJSONRPCNotification(message) || isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message))) {
      return `Invalid Request: batch message ${i} is not a JSON-RPC 2.0 message.`;
    }
  }
  return null;
}

/**
 * Why the batch `body` is refused under the request's `MCP-Protocol-Version` header `revision`, or null when `body`
 * is no batch or a batch the revision allows: at most MAX_BATCH_MESSAGES JSON-RPC messages, each request with its
 * own string or integer id, no `initialize` beside other messages. The reason is a JSON-RPC `-32600` message.
 */
export function batchRefusal(body: unknown, revision: string | undefined): string | null {
  if (!Array.isArray(body)) return null;
  const effective = revision ?? "2025-03-26";
  if (!BATCH_REVISIONS.includes(effective)) {
    return `Invalid Request: JSON-RPC batches are not supported under MCP protocol revision ${effective} (removed in 2025-06-18); send one message per request.`;
  }
  if (body.length > MAX_BATCH_MESSAGES) return `Invalid Request: Batch must not exceed ${MAX_BATCH_MESSAGES} messages.`;
  return messagesRefusal(body);
}

