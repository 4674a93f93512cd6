/**
 * The Express application: request timing (metrics), the operator probes (`/healthz`, `/readyz`), body parsing
 * (1 MiB), request logging, route-level semantics (405/OPTIONS/deprecation), API-key and OAuth access-token auth (and
 * the Protected Resource Metadata, RFC 9728), the per-credential rate limit, the
 * MCP endpoint (`/v1/ext/mcp`, mcp/edge.ts), the `/v1/ext` routers, the API reference (`/v1/ext/openapi.json`, `/docs`), the admin API, the console (`/console`,
 * console/index.ts) and the problem-details error renderer. No listening here (see server.ts).
 */
import express, { type Express, type Request } from "express";
import { pinoHttp } from "pino-http";
import { errorSerializer, requestSerializer, responseSerializer } from "./logger";
import { MAX_BODY_BYTES } from "@stageline/shared";
import type { AppContext } from "./context";
import { challengeInsufficientScope, requireAuth, resolveCredential } from "./http/auth";
import { protectedResourceMetadataRouter } from "./http/protected-resource-metadata";
import { docsRouter } from "./http/docs-page";
import { healthRouter, PROBE_PATHS } from "./http/health";
import { oauthRouter } from "./oauth/router";
import { bodyTimeout } from "./http/body-timeout";
import { routeSemantics } from "./http/method-not-allowed";
import { notFoundHandler } from "./http/not-found";
import { refuseNulInJson, refuseNulInUrl } from "./http/nul-characters";
import { renderProblem } from "./http/problem";
import { createRateLimiter } from "./http/rate-limit";
import { requestMetrics } from "./http/request-metrics";
import { requestIdOf, requestIds } from "./http/request-id";
import { requestLogging } from "./http/request-log";
import { newRequestId } from "./observability/request-context";
import { adminRouter } from "./admin/admin-routes";
import { consoleRouter } from "./console";
import { MCP_PATH, mcpRouter } from "./mcp/edge";
import { API_OPERATIONS } from "./openapi/operations";
import { buildRouteTable } from "./openapi/route-table";
import { eventsRouter } from "./routes/events";
import { batchRouter } from "./routes/batch";
import { itemsRouter } from "./routes/items";
import { meRouter } from "./routes/me";
import { openApiRouter } from "./routes/openapi";
import { pipelinesRouter } from "./routes/pipelines";
import { notesRouter } from "./routes/notes";
import { tasksRouter } from "./routes/tasks";
import { usersRouter } from "./routes/users";
import { webhooksRouter } from "./routes/webhooks";

/** Builds the app for `ctx`. */
export function createApp(ctx: AppContext): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", ctx.config.trustProxy);
  app.set("json spaces", 0);
  // No ETags: the API offers no conditional requests (spec), and hashing every body (47 KiB for a page of 100
  // items) cost about 3% of the list endpoint's CPU.
  app.set("etag", false);
  // Request-Id on every response and `request_id` in every problem body (http/request-id.ts).
  app.use(requestIds(app));
  app.use(requestMetrics(app, ctx.metrics.http));
  // pino-http writes one info-level line per request; below info (e.g. LOG_LEVEL=warn) it would write nothing yet
  // still cost a child logger per request, so it is mounted only when its lines are wanted.
  if (ctx.logger.isLevelEnabled("info")) {
    app.use(
      pinoHttp({
        logger: ctx.logger,
        // The log line's `req.id` is the request's Request-Id.
        genReqId: (req) => requestIdOf(req as Request) ?? newRequestId(),
        autoLogging: { ignore: (req) => PROBE_PATHS.has(req.url ?? "") },
        // URLs with secret segments and query values masked, credential headers redacted (logger.ts).
        serializers: { req: requestSerializer, res: responseSerializer, err: errorSerializer },
      }),
    );
  }
  app.use(bodyTimeout(ctx.config.bodyTimeoutMs));
  // Liveness and readiness probes: no key, no rate limit (http/health.ts).
  app.use(healthRouter(ctx));
  // The OAuth authorization server (/oauth, /.well-known/oauth-authorization-server): it parses its own bodies.
  app.use(oauthRouter(ctx));

  app.use("/console", consoleRouter(ctx));
  app.use("/admin", express.json({ limit: MAX_BODY_BYTES }), adminRouter(ctx));
  // The API reference: no key, not rate-limited per key (CONTRACT "Reference").
  app.use(docsRouter());
  // 405 + Allow, OPTIONS and deprecation headers, from the operation registry alone: before the key lookup and the
  // rate limiter, so a bad key or an unknown id on an unsupported method is still 405 and nothing is counted.
  const routes = buildRouteTable(API_OPERATIONS);
  app.use(routeSemantics(routes));
  app.use("/v1/ext", openApiRouter());
  // OAuth Protected Resource Metadata of the REST API and the MCP endpoint (RFC 9728; issue 32): public, no key.
  app.use(protectedResourceMetadataRouter(ctx));

  const limiter = createRateLimiter(ctx.prisma, ctx.rateLimit, ctx.config.rateLimitWindowSeconds);
  // The MCP endpoint for AI agents: its own key, rate-limit and error handling (mcp/edge.ts).
  app.use(MCP_PATH, mcpRouter(ctx, limiter));
  const ext = express.Router();
  ext.use(resolveCredential(ctx, limiter.store));
  // The request log (http/request-log.ts): every authenticated request, the rate-limited ones included.
  ext.use(requestLogging(ctx.requestLog, routes));
  ext.use(limiter.middleware);
  ext.use(requireAuth(ctx));
  ext.use(express.json({ limit: MAX_BODY_BYTES, type: () => true, verify: refuseNulInJson }));
  ext.use(refuseNulInUrl);
  ext.use(meRouter(ctx));
  ext.use(pipelinesRouter(ctx));
  ext.use(batchRouter(ctx));
  ext.use(itemsRouter(ctx));
  ext.use(tasksRouter(ctx));
  ext.use(usersRouter(ctx));
  ext.use(notesRouter(ctx));
  ext.use(webhooksRouter(ctx));
  ext.use(eventsRouter(ctx));
  ext.use(notFoundHandler);
  ext.use(challengeInsufficientScope(ctx));
  app.use("/v1/ext", ext);

  app.use(notFoundHandler);
  app.use(renderProblem(ctx.logger));
  return app;
}
