/**
 * The HTTP request duration histogram (issue 17) and the rules that keep its labels bounded: `route` is the route
 * template (`/v1/ext/items/:id`), never the path a client sent; `method` is a known method or `OTHER`;
 * `status_class` is `1xx`..`5xx`. Nothing a client chooses (ids, keys, query strings, case) reaches a label.
 */
import { Histogram, type Registry } from "prom-client";

/** The `route` of a request no route matched (404s, and requests answered by middleware before any route). */
export const UNMATCHED_ROUTE = "unmatched";

/** The `route` given to templates beyond `MAX_ROUTE_LABELS` (a guard: the app has far fewer routes). */
export const OVERFLOW_ROUTE = "other";

/** At most this many distinct `route` values per registry. */
export const MAX_ROUTE_LABELS = 500;

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** Records one finished request. */
export interface HttpMetrics {
  /**
   * Observes one request: `method` as received, `route` the matched route template or null when none matched,
   * `status` the response status, `seconds` from the request's arrival to the response's end.
   */
  observe(method: string, route: string | null, status: number, seconds: number): void;
}

/** Registers `stageline_http_request_duration_seconds` on `registry` and returns its recorder. */
export function registerHttpMetrics(registry: Registry): HttpMetrics {
  const duration = new Histogram({
    name: "stageline_http_request_duration_seconds",
    help: "Duration of HTTP requests on the main port, by method, route template and status class.",
    labelNames: ["method", "route", "status_class"] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const routes = new Set<string>();
  const routeLabel = (route: string | null): string => {
    if (route === null) return UNMATCHED_ROUTE;
    if (routes.has(route)) return route;
    if (routes.size >= MAX_ROUTE_LABELS) return OVERFLOW_ROUTE;
    routes.add(route);
    return route;
  };
  return {
    observe: (method, route, status, seconds) => {
      duration.observe(
        { method: METHODS.has(method) ? method : "OTHER", route: routeLabel(route), status_class: statusClass(status) },
        Math.max(0, seconds),
      );
    },
  };
}

/** `2xx` for 200..299 and so on; anything outside 100..599 is `5xx` (a server fault). */
export function statusClass(status: number): string {
  return status >= 100 && status < 600 ? `${Math.floor(status / 100)}xx` : "5xx";
}
