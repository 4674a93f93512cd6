/**
 * Dynamic Client Registration and API scopes (issue 32; RFC 7591 §2 `scope`, §3.2.1). MCP clients (the official SDK's
 * `registerClient`, for one) send the scopes they will ask for as the `scope` metadata of their registration.
 * oidc-provider checks a client's `scope` against its OpenID Connect scopes only (`offline_access`), while the API
 * scopes (`items:read`, ...) are scopes of the resource servers (features.resourceIndicators), so such a
 * registration would be refused with `invalid_client_metadata`. RFC 7591 §3.2.1 lets the server replace requested
 * metadata: the API scopes are dropped from `scope` before the provider sees it (the registration response shows
 * what was kept); which API scopes an app gets is decided at consent, as for every other client. Anything else in
 * `scope` still reaches the provider's check.
 */
import type { IncomingMessage } from "node:http";
import { SCOPES } from "@stageline/shared";

/** Largest registration body read, in bytes (oidc-provider's own body limit, `selective_body.js`). */
export const MAX_REGISTRATION_BYTES = 56 * 1024;

const API_SCOPES = new Set<string>(SCOPES);

/**
 * The registration metadata `body` with the API scopes left out of its `scope` (and `scope` removed when nothing is
 * left). Anything that is not an object with a string `scope` is returned unchanged.
 */
export function withoutApiScopes(body: unknown): unknown {
  if (!body || typeof body !== "object" || Array.isArray(body)) return body;
  const meta = body as Record<string, unknown>;
  if (typeof meta.scope !== "string") return body;
  const kept = meta.scope.split(" ").filter((s) => s && !API_SCOPES.has(s));
  const { scope: _dropped, ...rest } = meta;
  return kept.length ? { ...rest, scope: kept.join(" ") } : rest;
}

/** The part of Koa's context the middleware uses. */
interface RegistrationContext {
  method: string;
  path: string;
  req: IncomingMessage & { body?: unknown };
  is(type: string): string | false | null;
}

/**
 * Koa middleware for oidc-provider (`provider.use`): on `POST /reg` with a JSON body, reads the body (at most
 * `MAX_REGISTRATION_BYTES`; a larger one is left to the provider, which refuses it) and hands the provider the
 * metadata `withoutApiScopes` as an already-read body (oidc-provider then reads `req.body`, and says once per process
 * "already parsed request body detected": expected here). A body that is not JSON is handed on as read, for the
 * provider's own error.
 */
export async function registrationScopeMiddleware(c: RegistrationContext, next: () => Promise<void>): Promise<void> {
  if (c.method === "POST" && c.path === "/reg" && c.is("application/json")) {
    const declared = Number(c.req.headers["content-length"]);
    if (!(declared > MAX_REGISTRATION_BYTES)) {
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of c.req.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > MAX_REGISTRATION_BYTES) throw Object.assign(new Error("request entity too large"), { status: 413, expose: true });
        chunks.push(chunk);
      }
      const text = Buffer.concat(chunks).toString("utf8");
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        c.req.body = text;
        return next();
      }
      c.req.body = JSON.stringify(withoutApiScopes(parsed));
    }
  }
  await next();
}
