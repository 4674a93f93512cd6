/**
 * GET /v1/ext/events over HTTP for the stdio program's list_events (CONTRACT "Events feed (catch up without a public
 * URL)"). `@stageline/client` has no events resource yet (issue 31's client slice adds `events.list`); until then
 * this one read goes out with `fetch`, with the client's conventions: the key as `x-api-key` to the configured origin
 * only, a 30-second time limit, a problem body (CONTRACT "Errors") as the tool's problem (with `request_id`, from the
 * body or the `Request-Id` header), a `429` as `rate_limited`
 * with `retry_after_seconds`, a network failure naming the origin, never the key. Once the client has `events.list`,
 * `clientOperations` should call it and this module go.
 */
import { isRequestId, REQUEST_ID_HEADER, type FeedEvent } from "@stageline/shared";
import { OperationError, toolProblemOfProblem, type EventListRequest, type Page, type ToolProblem } from "../operations";

/** Time limit of one feed read (ms), the client's default per attempt. */
const FEED_TIMEOUT_MS = 30_000;

/** Where the feed is and who reads it. */
export interface FeedTarget {
  /** The server's base URL as configured (STAGELINE_BASE_URL); `/v1/ext/events` is added. */
  baseUrl: string;
  apiKey: string;
  /** The fetch implementation (default: the global `fetch`). */
  fetch?: typeof globalThis.fetch;
}

/**
 * The continuation of a feed page from its `Link` header (RFC 8288): the `rel="next"` URL's `after` (the page was
 * read with `after`) or `cursor` (newest first); null when no next link comes.
 */
export function feedContinuation(link: string | null): string | null {
  if (!link) return null;
  for (const match of link.matchAll(/<([^>]*)>\s*((?:;\s*[^;,]+)*)/g)) {
    const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))/i.exec(match[2] ?? "");
    if (!(rel?.[1] ?? rel?.[2] ?? "").toLowerCase().split(/\s+/).includes("next")) continue;
    const params = new URL(match[1] ?? "", "http://link.invalid").searchParams;
    return params.get("after") ?? params.get("cursor");
  }
  return null;
}

/**
 * The tool problem of a failed answer: its problem body, or the status when the body is not one; with the request's
 * `request_id` (the body's, else the `Request-Id` header's; CONTRACT "Request ids and the request log").
 */
async function problemOf(response: Response): Promise<ToolProblem> {
  const header = response.headers.get(REQUEST_ID_HEADER);
  if (response.status === 429) {
    const seconds = Number(response.headers.get("retry-after") ?? response.headers.get("ratelimit-reset") ?? NaN);
    const retry = Number.isFinite(seconds) ? { retry_after_seconds: Math.max(1, Math.ceil(seconds)) } : {};
    return { ...toolProblemOfProblem({ code: "rate_limited", detail: "Rate limit exceeded.", request_id: header }), ...retry };
  }
  const body = (await response.json().catch(() => null)) as { code?: unknown; detail?: unknown; request_id?: unknown } | null;
  if (body && typeof body.code === "string" && typeof body.detail === "string") {
    return toolProblemOfProblem({ ...(body as { code: string; detail: string }), request_id: isRequestId(body.request_id) ? body.request_id : header });
  }
  return toolProblemOfProblem({ code: "unknown", detail: `Stageline answered HTTP ${response.status}.`, request_id: header });
}

/**
 * One page of the feed (GET /v1/ext/events) as the key of `target` sees it.
 * @returns the events and `next_cursor`: the `after` or `cursor` of the next page (see `EventListRequest`).
 * @throws OperationError with the problem (`cursor_expired`, `insufficient_scope`, `validation_failed`,
 *   `rate_limited`, ...) or, when the server cannot be reached, `unknown` naming the origin.
 */
export async function readFeedPage(target: FeedTarget, request: EventListRequest): Promise<Page<FeedEvent>> {
  const url = new URL(`${target.baseUrl.replace(/\/+$/, "")}/v1/ext/events`);
  for (const [name, value] of Object.entries(request)) if (value !== undefined) url.searchParams.set(name, String(value));
  let response: Response;
  try {
    response = await (target.fetch ?? globalThis.fetch)(url, {
      headers: { "x-api-key": target.apiKey, accept: "application/json" },
      signal: AbortSignal.timeout(FEED_TIMEOUT_MS),
    });
  } catch {
    throw new OperationError({ code: "unknown", detail: `Could not reach Stageline at ${url.origin}; check STAGELINE_BASE_URL and try again.` });
  }
  if (!response.ok) throw new OperationError(await problemOf(response));
  const data = (await response.json()) as FeedEvent[];
  return { data, next_cursor: feedContinuation(response.headers.get("link")) };
}
