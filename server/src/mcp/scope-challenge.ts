/**
 * Step-up for OAuth clients on the MCP endpoint (MCP 2026-07-28 "Authorization", scope challenge handling; issue 32):
 * a `tools/call` of a Stageline tool whose scope an access token lacks is answered `403` with `WWW-Authenticate:
 * Bearer error="insufficient_scope", scope="<needed>", resource_metadata="..."` (http/auth.ts
 * `challengeInsufficientScope`), so the client can ask the user for that scope; `tools/list` still shows only the
 * token's tools. API keys keep today's answer (a tool error for a tool their scopes do not list).
 */
import { TOOLS, toolScopes } from "@stageline/mcp";
import type { Scope } from "@stageline/shared";
import type { AuthContext } from "../services/api-keys";

/**
 * The scopes (one would do) that a `tools/call` in the JSON-RPC `body` (one message or a batch) needs and an OAuth
 * credential lacks; null when none is missing, for API keys, and for unknown tool names (the SDK answers those).
 */
export function missingToolScopes(body: unknown, auth: AuthContext): readonly Scope[] | null {
  if (auth.credential.kind !== "oauth") return null;
  for (const message of Array.isArray(body) ? body : [body]) {
    const m = message as { method?: unknown; params?: { name?: unknown } } | null;
    if (m?.method !== "tools/call" || typeof m.params?.name !== "string") continue;
    const tool = TOOLS.find((t) => t.name === m.params!.name);
    const needed = tool ? toolScopes(tool) : [];
    if (needed.length && !needed.some((s) => auth.scopes.includes(s))) return needed;
  }
  return null;
}
