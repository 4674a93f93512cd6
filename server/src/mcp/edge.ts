/**
 * The MCP endpoint `/v1/ext/mcp` (CONTRACT "MCP server"; MCP "Streamable HTTP", stateless): the Stageline tools of
 * @stageline/mcp for the request's API key, served by the official SDK's `createMcpHandler` (protocol revision
 * 2026-07-28, and the 2025 revisions negotiated through its stateless legacy fallback). In order:
 * 1. `Origin` (mcp/origin-policy.ts): a browser request from an origin not in MCP_ALLOWED_ORIGINS is 403 (MCP
 *    "Security Warning": DNS rebinding), except, in development and test mode, the server's own loopback origin;
 *    requests without `Origin` pass.
 * 2. The credential (http/auth.ts, http/bearer-challenge.ts): the API key, as `x-api-key` or `Authorization: Bearer
 *    sl_...`, or an OAuth access token for this resource (issue 32), looked up and counted against its rate limit
 *    (the key's, or the grant's) like any request; none or a bad one is 401 with `WWW-Authenticate` (OAuth discovery,
 *    `resource_metadata`, only for a request without an API key), an inactive subscription 402.
 *    Over the rate limit the request still gets through, and every tool call answers a `rate_limited` tool error
 *    with `retry_after_seconds`.
 * 3. Options: `read_only` and `toolsets` as query parameters or the `X-MCP-Readonly` / `X-MCP-Toolsets` headers.
 * 4. Batches (mcp/batch-policy.ts): a JSON-RPC batch is refused (400, JSON-RPC -32600) unless its revision had
 *    batching (2025-03-26 and earlier); an allowed batch costs one unit per request message: the units past the
 *    first (counted by the key lookup) are reserved atomically up to what the window has left, tool calls draw on
 *    them, and the calls past them answer the `rate_limited` tool error. `RateLimit-Remaining` tells what is left.
 * 4b. An OAuth access token calling a tool its scopes lack is 403 with the `insufficient_scope` challenge
 *    (mcp/scope-challenge.ts: MCP step-up); an API key gets the tool error as before.
 * 5. The SDK answers JSON-RPC with a fresh McpServer whose tools are those the credential's scopes and the options allow
 *    (for a single `tools/call`, only the called one of them: `calledTool`), calling the services in-process
 *    (mcp/operations.ts).
 */
import { Readable } from "node:stream";
import express, { type Request, type RequestHandler, type Response, Router } from "express";
import { createMcpHandler, type AuthInfo } from "@modelcontextprotocol/server";
import { createStagelineMcpServer, parseReadOnly, parseToolsets, type ToolAccess, type ToolCallRecord } from "@stageline/mcp";
import { API_BASE_PATH, MAX_BODY_BYTES } from "@stageline/shared";
import type { AppContext } from "../context";
import { challengeInsufficientScope, requireAuth, resolveCredential } from "../http/auth";
import type { RateLimiter } from "../http/rate-limit";
import { refuseNulInJson } from "../http/nul-characters";
import { assertScope, type AuthContext } from "../services/api-keys";
import { domainError } from "../services/errors";
import { onlyMethods } from "../http/method-not-allowed";
import type { Mode } from "../config/config";
import { batchRefusal, countMessages } from "./batch-policy";
import { originAllowed } from "./origin-policy";
import { missingToolScopes } from "./scope-challenge";
import { inProcessOperations, type McpRequestInfo } from "./operations";
import { toolCallEntry } from "./tool-call-log";
import { requestIdOf } from "../http/request-id";

/** Where the endpoint is mounted. */
export const MCP_PATH = `${API_BASE_PATH}/mcp`;

/** What one request's McpServer is built from (handed to the SDK's factory through `AuthInfo.extra`). */
interface Connection {
  auth: AuthContext;
  access: ToolAccess;
  request: McpRequestInfo;
  /** The tool a single `tools/call` names: its instance registers only that tool (`calledTool`). */
  onlyTool: string | undefined;
  /** Queues each answered tool call in the request log (tool-call-log.ts). */
  onToolCall: (call: ToolCallRecord) => void;
}

/**
 * The tool name of a POST body that is ONE `tools/call` request (JSON-RPC "Request object"; MCP "Calling Tools"), or
 * undefined for anything else (a batch, another method, a malformed body: those get every tool the key may use).
 * The stateless endpoint builds one McpServer per request, and such a request can only call that tool.
 */
export function calledTool(body: unknown): string | undefined {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return undefined;
  const message = body as { method?: unknown; params?: { name?: unknown } | null };
  if (message.method !== "tools/call" || message.params === null || typeof message.params !== "object") return undefined;
  return typeof message.params.name === "string" ? message.params.name : undefined;
}

/**
 * 403 for a browser origin that is not allowed (mcp/origin-policy.ts; a JSON-RPC error without id, as MCP "Streamable
 * HTTP" suggests).
 */
function checkOrigin(allowed: readonly string[], mode: Mode): RequestHandler {
  return (req, res, next) => {
    if (originAllowed(req.header("origin"), allowed, mode, { localPort: req.socket.localPort, host: req.header("host") })) return next();
    res.status(403).json({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "Origin not allowed (MCP_ALLOWED_ORIGINS)." } });
  };
}

/** The request's options: query parameters first, then the headers. @throws DomainError 400 for a bad value. */
function accessOf(req: Request, auth: AuthContext): ToolAccess {
  const text = (query: string, header: string): string | undefined => {
    const q = req.query[query];
    return typeof q === "string" ? q : req.header(header);
  };
  try {
    return {
      scopes: auth.scopes,
      readOnly: parseReadOnly(text("read_only", "x-mcp-readonly")),
      toolsets: parseToolsets(text("toolsets", "x-mcp-toolsets")),
    };
  } catch (err) {
    throw domainError("validation_failed", (err as Error).message);
  }
}

/** The Express request as the web-standard Request the SDK takes (the body goes as `parsedBody`). */
function webRequestOf(req: Request): globalThis.Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name === "content-length") continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  return new globalThis.Request(`http://localhost${req.originalUrl}`, { method: req.method, headers });
}

/**
 * Writes the SDK's web Response to Express: a JSON answer at once, anything else (an SSE stream) streamed, so it
 * flows as it is produced.
 */
async function sendWebResponse(res: Response, answer: globalThis.Response): Promise<void> {
  res.status(answer.status);
  answer.headers.forEach((value, name) => res.setHeader(name, value));
  if (!answer.body) return void res.end();
  if (!(answer.headers.get("content-type") ?? "").startsWith("text/event-stream")) return void res.end(Buffer.from(await answer.arrayBuffer()));
  await new Promise<void>((resolve, reject) => {
    const body = Readable.fromWeb(answer.body as import("node:stream/web").ReadableStream);
    body.on("error", reject).pipe(res).on("finish", resolve).on("error", reject);
    res.on("close", () => {
      body.destroy();
      resolve();
    });
  });
}

/**
 * The rate-limit budget of the POST body `body` (mcp/batch-policy.ts): undefined for a single message (the key lookup
 * counted its unit); for a batch, the units past the first reserved now (none when the lookup was already over the
 * limit), `RateLimit-Remaining` set to what the window has left after them.
 */
async function batchBudget(req: Request, res: Response, limiter: RateLimiter, counterKey: string): Promise<McpRequestInfo["toolCallBudget"]> {
  if (!Array.isArray(req.body)) return undefined;
  const { requests, toolCalls } = countMessages(req.body);
  const paid = req.rateLimitedFor === undefined ? 1 : 0;
  let granted = 0;
  let retryAfterSeconds = req.rateLimitedFor ?? limiter.windowSeconds;
  if (paid === 1 && requests > 1) {
    const reserved = await limiter.store.reserve(counterKey, requests - 1, limiter.limit);
    granted = reserved.granted;
    retryAfterSeconds = Math.max(1, Math.ceil((reserved.resetTime.getTime() - Date.now()) / 1000));
    res.setHeader("RateLimit-Remaining", String(reserved.remaining));
  }
  return { remaining: Math.min(toolCalls, paid + granted), retryAfterSeconds };
}

/** The `/v1/ext/mcp` router. `limiter` is the app's rate limiter (its store is shared with the REST API). */
export function mcpRouter(ctx: AppContext, limiter: RateLimiter): Router {
  const handler = createMcpHandler(
    (request) => {
      const connection = request.authInfo?.extra?.stageline as Connection;
      return createStagelineMcpServer(inProcessOperations(ctx, connection.auth, connection.request), connection.access, {
        onlyTool: connection.onlyTool,
        onToolCall: connection.onToolCall,
      });
    },
    { legacy: "stateless", maxRequestBodySize: MAX_BODY_BYTES },
  );
  const router = Router();
  router.all("/", onlyMethods(MCP_PATH, ["POST"]));
  router.use(checkOrigin(ctx.config.mcpAllowedOrigins, ctx.config.mode));
  router.use(resolveCredential(ctx, limiter.store), limiter.markingMiddleware, requireAuth(ctx));
  router.use(express.json({ limit: MAX_BODY_BYTES, verify: refuseNulInJson }));
  router.post("/", async (req, res) => {
    const auth = req.auth!;
    const access = accessOf(req, auth);
    const missing = missingToolScopes(req.body, auth);
    if (missing) assertScope(auth, [...missing]);
    const refusal = batchRefusal(req.body, req.header("mcp-protocol-version"));
    if (refusal) return void res.status(400).json({ jsonrpc: "2.0", id: null, error: { code: -32600, message: refusal } });
    const requestId = requestIdOf(req) ?? "";
    const request: McpRequestInfo = { ip: req.ip ?? null, rateLimited: req.rateLimitedFor, toolCallBudget: await batchBudget(req, res, limiter, auth.counterKey), requestId };
    const userAgent = req.header("user-agent") ?? null;
    const onToolCall = (call: ToolCallRecord) => ctx.requestLog.record(toolCallEntry(call, auth, requestId, new Date(Date.now() - call.durationMs), userAgent));
    const connection: Connection = { auth, access, request, onlyTool: calledTool(req.body), onToolCall };
    const authInfo: AuthInfo = { token: "", clientId: auth.credential.kind === "oauth" ? auth.credential.clientId : auth.keyId, scopes: [...auth.scopes], extra: { stageline: connection } };
    await sendWebResponse(res, await handler.fetch(webRequestOf(req), { authInfo, parsedBody: req.body }));
  });
  router.use(challengeInsufficientScope(ctx));
  return router;
}
