/**
 * The MCP tools' operations over HTTP (CONTRACT "MCP server", stdio program): `StagelineOperations` with
 * `@stageline/client`, so retries, idempotency keys (sent as `Idempotency-Key`) and rate-limit waits are the client's.
 * The client waits out a short rate limit itself (up to `maxRateLimitWaitMs`); a longer one becomes a
 * `rate_limited` tool error with `retry_after_seconds`. A `StagelineError` becomes an `OperationError` carrying the
 * problem's `code`, `detail`, `errors`, `current_version`, `matches` and the failed request's `request_id` (the
 * client's `requestId`: the body's `request_id`, else the `Request-Id` header; CONTRACT "Request ids and the request
 * log"); a network failure says which origin was unreachable, never the key.
 */
import { ConnectionError, RateLimitError, Stageline, StagelineError, type ItemListQuery, type NoteListQuery, type TaskListQuery } from "@stageline/client";
import type { Scope } from "@stageline/shared";
import { OperationError, toolProblemOfProblem, type Page, type PipelineDescription, type StagelineOperations, type ToolProblem } from "../operations";
import { readFeedPage, type FeedTarget } from "./events-feed";

/** How long one tool call waits for the rate limit before answering `rate_limited` (ms). */
export const MAX_RATE_LIMIT_WAIT_MS = 10_000;

/** `{ request_id }` when the client error names its request, else nothing. */
function requestIdMember(err: { requestId: string | undefined }): Pick<ToolProblem, "request_id"> {
  return err.requestId === undefined ? {} : { request_id: err.requestId };
}

/** The problem of a client error, as a tool reports it (with the failed request's `request_id` when it has one). */
export function toolProblemOfClientError(err: unknown, origin: string): ToolProblem | undefined {
  if (err instanceof RateLimitError) {
    const seconds = err.retryAfterSeconds ?? Number(err.headers.get("ratelimit-reset") ?? NaN);
    const retry = Number.isFinite(seconds) ? Math.max(1, Math.ceil(seconds)) : undefined;
    return { code: "rate_limited", detail: err.detail || "Rate limit exceeded.", ...(retry !== undefined ? { retry_after_seconds: retry } : {}), ...requestIdMember(err) };
  }
  if (err instanceof StagelineError) {
    return toolProblemOfProblem({
      ...err.problem,
      code: err.code,
      detail: err.detail || err.title,
      errors: err.errors,
      current_version: err.currentVersion,
      request_id: err.requestId,
    });
  }
  if (err instanceof ConnectionError) {
    return { code: "unknown", detail: `Could not reach Stageline at ${origin}; check STAGELINE_BASE_URL and try again.`, ...requestIdMember(err) };
  }
  return undefined;
}

/** Runs `fn`, turning client errors into OperationErrors. */
async function guarded<T>(origin: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    const problem = toolProblemOfClientError(err, origin);
    throw problem ? new OperationError(problem) : err;
  }
}

/** The client's page in the tools' shape. */
function pageOf<T>(page: { data: T[]; nextCursor: string | null }): Page<T> {
  return { data: page.data, next_cursor: page.nextCursor };
}

/**
 * Operations for the API key and server of `client`.
 * @param origin the server's origin, for error messages (never the key).
 * @param feed the same key and server for the events feed, which the client does not read yet (events-feed.ts).
 */
export function clientOperations(client: Stageline, origin: string, feed: FeedTarget): StagelineOperations {
  const g = <T>(fn: () => Promise<T>) => guarded(origin, fn);
  const keyed = (key: string | undefined) => (key === undefined ? undefined : { idempotencyKey: key });
  let scopes: Promise<readonly Scope[]> | undefined;
  return {
    scopes: () => (scopes ??= g(async () => (await client.me()).key.scopes as Scope[])),
    listItems: (request) => g(async () => pageOf(await client.items.list(request as ItemListQuery))),
    getItem: (id) => g(() => client.items.get(id)),
    createItem: (body, key) => g(() => client.items.create(body, keyed(key))),
    updateItem: (id, body) => g(() => client.items.update(id, body)),
    deleteItem: (id, version) => g(() => client.items.delete(id, version === undefined ? {} : { version })),
    upsertItem: (body, key) => g(() => client.items.upsert(body, keyed(key))),
    checkDuplicates: (body) => g(() => client.items.checkDuplicates(body)),
    listTasks: ({ is_completed, ...rest }) =>
      g(async () => pageOf(await client.tasks.list({ ...rest, ...(is_completed === undefined ? {} : { is_completed: String(is_completed) }) } as TaskListQuery))),
    getTask: (id) => g(() => client.tasks.get(id)),
    createTask: (body, key) => g(() => client.tasks.create(body, keyed(key))),
    updateTask: (id, body) => g(() => client.tasks.update(id, body)),
    listNotes: ({ pinned, ...rest }) =>
      g(async () => pageOf(await client.notes.list({ ...rest, ...(pinned === undefined ? {} : { pinned: String(pinned) }) } as NoteListQuery))),
    createNote: (body, key) => g(() => client.notes.create(body, keyed(key))),
    updateNote: (id, body) => g(() => client.notes.update(id, body)),
    deleteNote: (id, version) => g(() => client.notes.delete(id, version === undefined ? {} : { version })),
    listUsers: (request) => g(async () => pageOf(await client.users.list(request))),
    listEvents: (request) => readFeedPage(feed, request),
    describePipelines: () =>
      g(async () => {
        const pipelines = await client.pipelines.list();
        return Promise.all(
          pipelines.map(async (p): Promise<PipelineDescription> => {
            const [stages, fields] = await Promise.all([client.pipelines.stages(p.id), client.pipelines.fields(p.id)]);
            const withStatuses = await Promise.all(stages.map(async (s) => ({ id: s.id, name: s.name, statuses: await client.pipelines.statuses(p.id, s.id) })));
            return { id: p.id, name: p.name, stages: withStatuses, fields };
          }),
        );
      }),
    subscribeWebhook: (body, key) => g(() => client.webhooks.subscribe(body as Parameters<Stageline["webhooks"]["subscribe"]>[0], keyed(key))),
    listWebhooks: (request) => g(async () => pageOf(await client.webhooks.list(request))),
    unsubscribeWebhook: (id) => g(() => client.webhooks.unsubscribe(id)),
    listWebhookDeliveries: (id, request) => g(async () => pageOf(await client.webhooks.deliveries(id, request))),
  };
}
