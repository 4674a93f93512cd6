/**
 * The request log's entry of one MCP tool call (issue 40; CONTRACT "Request ids and the request log": "each MCP tool
 * call as an entry of its own under its tool name"): method `MCP`, route the tool's name, the id arguments
 * (`item_id`, `task_id`, ...: ids, never other values) as the path ids, the status the REST call would have answered
 * (200, or the problem code's status), the problem's `code` and `errors[].path`, the `idempotency_key` argument, and
 * the HTTP request's Request-Id, credential and user agent.
 */
import { PROBLEM_STATUS, isIdempotencyKey, type ErrorCode } from "@stageline/shared";
import type { ToolCallRecord } from "@stageline/mcp";
import type { RequestLogEntry } from "../db/request-log";
import { credentialOf } from "../http/request-log";
import type { AuthContext } from "../services/api-keys";

/** The request-log method of a tool call. */
export const TOOL_CALL_METHOD = "MCP";
/** Id arguments kept per call, and their length. */
const MAX_IDS = 5;
const MAX_ID_CHARS = 100;

/** The `*_id` string arguments of `args` (at most `MAX_IDS`), or null. */
function idArguments(args: unknown): Record<string, string> | null {
  if (!args || typeof args !== "object" || Array.isArray(args)) return null;
  let ids: Record<string, string> | null = null;
  let n = 0;
  for (const [name, value] of Object.entries(args)) {
    if (n >= MAX_IDS) break;
    if (!name.endsWith("_id") || typeof value !== "string") continue;
    (ids ??= {})[name.slice(0, 40)] = value.slice(0, MAX_ID_CHARS);
    n++;
  }
  return ids;
}

/** The entry of `call`, made by the request `requestId` of `auth` that arrived `at`. */
export function toolCallEntry(call: ToolCallRecord, auth: AuthContext, requestId: string, at: Date, userAgent: string | null): RequestLogEntry {
  const problem = call.problem;
  const key = (call.args as { idempotency_key?: unknown } | null)?.idempotency_key;
  return {
    requestId,
    companyId: auth.company.id,
    at,
    method: TOOL_CALL_METHOD,
    route: call.tool,
    pathIds: idArguments(call.args),
    status: problem ? (PROBLEM_STATUS[problem.code as ErrorCode] ?? 500) : 200,
    code: problem?.code ?? null,
    errorPaths: problem?.errors?.length ? problem.errors.slice(0, 20).map((e) => String(e.path).slice(0, 200)) : null,
    durationMs: call.durationMs,
    ...credentialOf(auth),
    idempotencyKey: isIdempotencyKey(key) ? key : null,
    replayed: false,
    rateLimitRemaining: null,
    userAgent,
  };
}
