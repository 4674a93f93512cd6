/**
 * Feeds the request log (issue 40; CONTRACT "Request ids and the request log") from the REST API: when a `/v1/ext`
 * response has been sent for a request whose credential authenticated (so its company is known), one entry is
 * queued with what the contract lists: the Request-Id, time, method, route template and the ids in the path, status,
 * the problem's `code` and `errors[].path` (http/request-id.ts reads them as the problem is sent), duration,
 * credential, `Idempotency-Key` and whether it replayed, `RateLimit-Remaining` and the user agent. Never a body, a
 * query value, another header or a secret. Queuing is synchronous and never fails (services/request-log/writer.ts).
 * Requests no credential authenticated belong to no company and are not logged.
 */
import type { Request, RequestHandler } from "express";
import { IDEMPOTENT_REPLAYED_HEADER } from "@stageline/shared";
import type { RequestLogEntry } from "../db/request-log";
import type { RouteTable } from "../openapi/route-table";
import type { RequestLogWriter } from "../services/request-log/writer";
import type { AuthContext } from "../services/api-keys";
import { requestContextOf } from "./request-id";

/** The route of a request no template matches (its path itself is never kept). */
export const UNMATCHED_ROUTE = "(no route)";
/** An id from a path is kept to this many characters. */
const MAX_ID_CHARS = 100;

/** The credential columns of an entry for `auth`: the API key, or the OAuth app by its client id. */
export function credentialOf(auth: AuthContext): Pick<RequestLogEntry, "credentialType" | "credentialId" | "credentialName"> {
  return auth.credential.kind === "oauth"
    ? { credentialType: "oauth", credentialId: auth.credential.clientId, credentialName: auth.keyName }
    : { credentialType: "key", credentialId: auth.keyId, credentialName: auth.keyName };
}

/** The template `table` gives the path of `req` and the ids in it by parameter name. */
function routeOf(table: RouteTable, path: string): { route: string; pathIds: Record<string, string> | null } {
  const entry = table.match(path);
  if (!entry) return { route: UNMATCHED_ROUTE, pathIds: null };
  const parts = (path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path).split("/").slice(1);
  const names = entry.template.split("/").slice(1);
  let pathIds: Record<string, string> | null = null;
  for (const [i, seg] of entry.segments.entries()) {
    if (seg !== null) continue;
    let value = parts[i] ?? "";
    try {
      value = decodeURIComponent(value);
    } catch {
      // kept as sent
    }
    (pathIds ??= {})[names[i]!.replace(/^\{|\}$/g, "")] = value.slice(0, MAX_ID_CHARS);
  }
  return { route: entry.template, pathIds };
}

/** `RateLimit-Remaining` of the response as a number, or null. */
function remainingOf(value: unknown): number | null {
  const n = Number(Array.isArray(value) ? value[0] : value);
  return Number.isFinite(n) ? n : null;
}

/**
 * Middleware for the `/v1/ext` router, mounted right after the credential is resolved: queues the request's entry once
 * its response has finished.
 */
export function requestLogging(writer: RequestLogWriter, table: RouteTable): RequestHandler {
  return (req, res, next) => {
    const auth = req.auth;
    if (!auth) return next();
    const at = new Date();
    const path = req.originalUrl.split("?")[0]!;
    const started = process.hrtime.bigint();
    res.once("finish", () => {
      const context = requestContextOf(req as Request);
      writer.record({
        requestId: context?.id ?? "",
        companyId: auth.company.id,
        at,
        method: req.method,
        ...routeOf(table, path),
        status: res.statusCode,
        code: context?.problem?.code ?? null,
        errorPaths: context?.problem?.paths?.length ? context.problem.paths : null,
        durationMs: Number(process.hrtime.bigint() - started) / 1e6,
        ...credentialOf(auth),
        idempotencyKey: context?.idempotencyKey ?? null,
        replayed: res.getHeader(IDEMPOTENT_REPLAYED_HEADER) === "true",
        rateLimitRemaining: remainingOf(res.getHeader("RateLimit-Remaining")),
        userAgent: req.header("user-agent") ?? null,
      });
    });
    next();
  };
}
