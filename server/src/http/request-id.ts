/**
 * `Request-Id` on every response (CONTRACT "Request ids and the request log"; as Stripe's `Request-Id`): the first
 * middleware of the app gives each request a new opaque id (observability/request-context.ts; an id a client sends
 * is never taken over), sets the response header, and runs the rest of the request inside its request context. Every
 * RFC 9457 problem body the app sends carries the same id as `request_id`, whichever code path wrote it (services,
 * the rate limiter, idempotent replays, the probes): the response's `send` adds it to any `application/problem+json`
 * body, once per app, not per request.
 */
import type { Express, Request, RequestHandler, Response } from "express";
import { IDEMPOTENCY_KEY_HEADER, PROBLEM_CONTENT_TYPE, isIdempotencyKey } from "@stageline/shared";
import { newRequestId, runInRequest, type RequestContext } from "../observability/request-context";

/** The response header naming the request. */
export const REQUEST_ID_HEADER = "Request-Id";

const IDEMPOTENCY_KEY_HEADER_LC = IDEMPOTENCY_KEY_HEADER.toLowerCase();
const CONTEXT = Symbol("stageline.requestContext");
type WithContext = { [CONTEXT]?: RequestContext };

/** The request context of `req` (set by `requestIds`), or undefined for a request that did not pass it. */
export function requestContextOf(req: Request): RequestContext | undefined {
  return (req as WithContext)[CONTEXT];
}

/** The request id of `req`, or undefined. */
export function requestIdOf(req: Request): string | undefined {
  return requestContextOf(req)?.id;
}

/** At most this many `errors[].path` values are kept of one problem (MAX_PROBLEM_FIELD_ERRORS bounds a body). */
const MAX_KEPT_PATHS = 20;

/**
 * `body` (a problem's JSON text) with `request_id` set, and what the request log keeps of it (its `code`, its
 * `errors[].path`); any other text unchanged (a body that is not a JSON object is left as it is rather than broken).
 */
export function withRequestId(body: string, context: RequestContext): string {
  try {
    const parsed: unknown = JSON.parse(body);
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return body;
    const problem = parsed as { code?: unknown; errors?: unknown };
    const paths = Array.isArray(problem.errors)
      ? problem.errors.map((e: { path?: unknown }) => (typeof e?.path === "string" ? e.path.slice(0, 200) : "")).slice(0, MAX_KEPT_PATHS)
      : null;
    context.problem = { code: typeof problem.code === "string" ? problem.code : null, paths };
    return JSON.stringify({ ...problem, request_id: context.id });
  } catch {
    return body;
  }
}

/**
 * Installs the problem-body hook on `app`'s responses and returns the middleware that assigns the ids; mount it first.
 */
export function requestIds(app: Express): RequestHandler {
  const send = app.response.send;
  app.response.send = function (this: Response, body?: unknown) {
    const context = requestContextOf(this.req);
    if (context && typeof body === "string" && String(this.get("content-type") ?? "").startsWith(PROBLEM_CONTENT_TYPE)) {
      return send.call(this, withRequestId(body, context));
    }
    return send.call(this, body);
  } as Response["send"];
  return (req, res, next) => {
    const key = req.headers[IDEMPOTENCY_KEY_HEADER_LC];
    const context: RequestContext = { id: newRequestId(), idempotencyKey: isIdempotencyKey(key) ? key : null };
    (req as WithContext)[CONTEXT] = context;
    res.setHeader(REQUEST_ID_HEADER, context.id);
    runInRequest(context, next);
  };
}
