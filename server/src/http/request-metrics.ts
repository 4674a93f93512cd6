/**
 * Times every request of the main port into `stageline_http_request_duration_seconds` (observability/http-metrics.ts)
 * with the route *template* as its `route` label: `/v1/ext/items/:id`, never `/v1/ext/items/7f3c...`.
 *
 * Express sets `req.route` when a route matches; at that moment `req.baseUrl` is the mount path of the router that
 * holds the route (later, when an error travels back out of the router, Express restores `baseUrl` but keeps
 * `route`, so the two no longer fit together). The template is therefore captured by an accessor for `route` on the
 * app's request prototype: one property definition per app, nothing per request.
 */
import type { Express, Request, RequestHandler } from "express";
import type { HttpMetrics } from "../observability/http-metrics";

const ROUTE = Symbol("stageline.route");
const TEMPLATE = Symbol("stageline.routeTemplate");

interface TemplatedRequest {
  [ROUTE]?: unknown;
  [TEMPLATE]?: string;
}

/**
 * Installs the route-template capture on `app` and returns the timing middleware; mount it first.
 * Mount paths are lower-cased (Express matches them case-insensitively, so `/V1/EXT/...` would be another label).
 */
export function requestMetrics(app: Express, metrics: HttpMetrics): RequestHandler {
  Object.defineProperty(app.request, "route", {
    configurable: true,
    get(this: TemplatedRequest) {
      return this[ROUTE];
    },
    set(this: TemplatedRequest & Request, route: { path?: unknown } | undefined) {
      this[ROUTE] = route;
      if (route) this[TEMPLATE] = (this.baseUrl ?? "").toLowerCase() + routePath(route.path);
    },
  });
  return (req, res, next) => {
    const start = process.hrtime.bigint();
    res.once("finish", () => {
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      metrics.observe(req.method, (req as TemplatedRequest)[TEMPLATE] ?? null, res.statusCode, seconds);
    });
    next();
  };
}

/** A route's path as written in the code (`/items/:id`); a list of paths is joined with `,`. */
function routePath(path: unknown): string {
  if (typeof path === "string") return path;
  if (Array.isArray(path)) return path.map(String).join(",");
  return String(path);
}
