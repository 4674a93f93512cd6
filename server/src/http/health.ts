/**
 * Operator probes on the main port (issue 17), mounted before the API key check and the rate limits:
 * - `GET /healthz`: liveness, 200 `{"status":"ok"}` while the process serves HTTP (no database access);
 * - `GET /readyz`: readiness (observability/readiness.ts), 200 `{"status":"ready","checks":{...}}`, else 503 with
 *   an RFC 9457 problem body (`type` `about:blank`, `title` "Service Unavailable", `detail`, and `checks`).
 * `GET /health` is the older name of `/healthz`, kept for existing probes.
 * Neither is part of the external API (`/v1/ext`), so they are not in the OpenAPI document; docs/operations.md ("Health checks and metrics") documents them.
 */
import express, { type RequestHandler, type Router } from "express";
import { PROBLEM_CONTENT_TYPE } from "@stageline/shared";
import type { AppContext } from "../context";
import { checkReadiness } from "../observability/readiness";

/** Paths of the probes, which request logging skips (a probe every few seconds would drown the log). */
export const PROBE_PATHS: ReadonlySet<string> = new Set(["/health", "/healthz", "/readyz"]);

/** The `/healthz`, `/health` and `/readyz` routes of `ctx`'s server. */
export function healthRouter(ctx: AppContext): Router {
  const router = express.Router();
  const alive: RequestHandler = (_req, res) => {
    res.set("cache-control", "no-store").json({ status: "ok" });
  };
  router.get("/healthz", alive);
  router.get("/health", alive);
  // Probes that arrive while a check runs share it: a flood of /readyz (public, not rate limited) costs the
  // database one check at a time, never one per request.
  let running: ReturnType<typeof checkReadiness> | null = null;
  router.get("/readyz", async (_req, res) => {
    running ??= checkReadiness(ctx.db, ctx.logger).finally(() => (running = null));
    const readiness = await running;
    res.set("cache-control", "no-store");
    if (readiness.ready) {
      res.json({ status: "ready", checks: readiness.checks });
      return;
    }
    const problem = { type: "about:blank", title: "Service Unavailable", status: 503, detail: readiness.detail, checks: readiness.checks };
    res.status(503).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(problem));
  });
  return router;
}
