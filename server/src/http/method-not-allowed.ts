/**
 * Route-level HTTP semantics of `/v1/ext` (CONTRACT "HTTP semantics" and "HTTP semantics, order of checks"), decided
 * from the route table alone (openapi/route-table.ts, built from the operation registry), before the key lookup, the
 * rate limiter or any database work:
 * - a method the path does not support: `405 method_not_allowed` with `Allow` (RFC 9110 section 15.5.6), not counted
 *   against the rate limit; a literal segment is never an id (`GET /items/check-duplicates` is 405);
 * - `OPTIONS`: `204` with `Allow`;
 * - a deprecated operation: its Deprecation/Sunset/Link headers (http/deprecation.ts) on whatever it answers.
 * Paths that name no template pass through (and end as 404 further on).
 */
import type { RequestHandler, Response } from "express";
import { ALLOW_HEADER } from "@stageline/shared";
import type { RouteTable } from "../openapi/route-table";
import { domainError } from "../services/errors";
import { deprecationHeaders } from "./deprecation";
import { sendProblem } from "./problem";

/**
 * Answers `405 method_not_allowed` (problem details, CONTRACT "Errors") with `Allow: allow` (RFC 9110 section
 * 15.5.6) for `method` on `template`. Shared by the route table below and the MCP endpoint (mcp/edge.ts).
 */
export function sendMethodNotAllowed(res: Response, method: string, template: string, allow: string): void {
  res.set(ALLOW_HEADER, allow);
  sendProblem(res, domainError("method_not_allowed", `${method} is not supported on ${template}; use ${allow}.`));
}

/**
 * Route-level semantics of one path that takes only the methods `allow` (e.g. `"POST"`): `OPTIONS` is `204` with
 * `Allow`, any other method not in it `405` (`sendMethodNotAllowed`), decided before anything else runs.
 */
export function onlyMethods(template: string, allow: readonly string[]): RequestHandler {
  const header = allow.join(", ");
  return (req, res, next) => {
    const method = req.method.toUpperCase();
    if (method === "OPTIONS") return void res.set(ALLOW_HEADER, header).status(204).end();
    if (!allow.includes(method)) return sendMethodNotAllowed(res, method, template, header);
    next();
  };
}

/** Middleware over `table` (mount it at the app root, before `/v1/ext`). */
export function routeSemantics(table: RouteTable): RequestHandler {
  return (req, res, next) => {
    const entry = table.match(req.path);
    if (!entry) return next();
    const method = req.method.toUpperCase();
    if (method === "OPTIONS") {
      res.set(ALLOW_HEADER, entry.allow).status(204).end();
      return;
    }
    const op = entry.operations.get(method === "HEAD" ? "GET" : method);
    if (!op) return sendMethodNotAllowed(res, method, entry.template, entry.allow);
    if (op.deprecated) res.set(deprecationHeaders(op.deprecated));
    next();
  };
}
