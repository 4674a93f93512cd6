/**
 * The MCP tools' operations in-process (CONTRACT "MCP server"; the notes and people tools: CONTRACT "Notes",
 * "People"; list_events: CONTRACT "Events feed"): `StagelineOperations` of @stageline/mcp for one
 * authenticated API key, calling the service layer as the REST routes do (same parsing with the contract schemas,
 * same scope checks, same idempotency keys through `createIdempotently`, the upsert included, so a key means the same
 * on both edges), so `/v1/ext/mcp` never calls the server over HTTP. A DomainError becomes an `OperationError` with
 * the problem's `code`, `detail`, `errors`, `current_version`, `matches`.
 */
import {
  API_BASE_PATH,
  DeliveryListQuerySchema,
  DomainError,
  DuplicateCheckSchema,
  EventListQuerySchema,
  ItemCreateSchema,
  ItemDeleteQuerySchema,
  ItemListQuerySchema,
  ItemUpdateSchema,
  ItemUpsertSchema,
  NoteCreateSchema,
  NoteDeleteQuerySchema,
  NoteListQuerySchema,
  NoteUpdateSchema,
  PageQuerySchema,
  TaskCreateSchema,
  TaskListQuerySchema,
  TaskUpdateSchema,
  UPSERT_RESULT_HEADER,
  UPSERT_RESULTS,
  UserListQuerySchema,
  WebhookSubscribeSchema,
  parseInput,
  type Item,
  type KeysetPosition,
  type Problem,
  type Scope,
  type UpsertResult,
} from "@stageline/shared";
import { OperationError, toolProblemOfProblem, type Page, type StagelineOperations, type ToolProblem } from "@stageline/mcp";
import type { AppContext } from "../context";
import { createIdempotently, type CreatedResponse } from "../http/idempotency";
import { actorOfAuth, assertScope, type AuthContext } from "../services/api-keys";
import { OUTAGE_RETRY_AFTER_SECONDS, outageOf } from "../services/database-outage";
import { checkDuplicates } from "../services/duplicates";
import { IN_USE_RETRY_AFTER_SECONDS, type IdempotencyClaim } from "../services/idempotency";
import { listEvents } from "../services/events-feed";
import { deleteItem } from "../services/item-delete";
import { toItemResponse } from "../services/item-format";
import { upsertHeaders, upsertItem } from "../services/item-upsert";
import * as items from "../services/items";
import { toNoteResponse } from "../services/note-format";
import * as notes from "../services/notes";
import { toPage } from "../services/keyset-page";
import * as pipelines from "../services/pipelines";
import * as tasks from "../services/tasks";
import { encodeDirectoryCursor, listPeople } from "../services/user-directory";
import * as hooks from "../services/webhook-subscriptions";

/** The problem of a DomainError as a tool reports it. */
export function toolProblemOf(err: DomainError): ToolProblem {
  const problem = toolProblemOfProblem({ ...err.extras, code: err.code, detail: err.detail });
  if (err.code === "idempotency_key_in_use") problem.retry_after_seconds = IN_USE_RETRY_AFTER_SECONDS;
  if (err.code === "service_unavailable") problem.retry_after_seconds = OUTAGE_RETRY_AFTER_SECONDS;
  return problem;
}

/**
 * Runs `fn`, turning a DomainError into an OperationError, and a database that cannot be reached into the
 * `service_unavailable` one (with `retry_after_seconds`, services/database-outage.ts) instead of the tools' `internal`.
 */
async function guarded<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof DomainError) throw new OperationError(toolProblemOf(err));
    const outage = outageOf(err);
    if (outage) throw new OperationError(toolProblemOf(outage));
    throw err;
  }
}

/** A list page (rows fetched with `limit + 1`) in the tools' shape. */
function pageOf<R extends KeysetPosition, T>(rows: R[], limit: number, format: (row: R) => T): Page<T> {
  const page = toPage(rows, limit);
  return { data: page.items.map(format), next_cursor: page.next };
}

/** As `pageOf`, for a list in another keyset order: `cursorOf` makes the next page's cursor from a page's last row. */
function pageOrderedBy<R, T>(rows: R[], limit: number, cursorOf: (last: R) => string, format: (row: R) => T): Page<T> {
  const page = rows.slice(0, limit);
  return { data: page.map(format), next_cursor: rows.length > limit ? cursorOf(page[page.length - 1]!) : null };
}

/** The request the operations serve, beside its key. */
export interface McpRequestInfo {
  /** Client IP (`req.ip`) or null, for the audit log of a deletion. */
  ip: string | null;
  /**
   * Seconds until the key's rate-limit window resets when this request was over the limit: every operation then
   * fails with `rate_limited` (CONTRACT "MCP server": 429 becomes a tool error that says when to retry).
   */
  rateLimited?: number | undefined;
  /**
   * For a JSON-RPC batch (mcp/batch-policy.ts): how many tool calls the units reserved for it still pay for, and the
   * seconds until the window resets. Each operation takes one unit when it starts; once none is left, it fails with
   * `rate_limited` like a call over the limit. Absent for a single message (its unit was counted by the key lookup).
   */
  toolCallBudget?: { remaining: number; retryAfterSeconds: number } | undefined;
  /** The HTTP request's `Request-Id`: every tool error carries it as `request_id` (CONTRACT "Request ids ..."). */
  requestId?: string | undefined;
}

/** The `rate_limited` tool error of a call over the key's limit (CONTRACT "MCP server"). */
function rateLimitedError(ctx: AppContext, retryAfterSeconds: number): OperationError {
  return new OperationError({
    code: "rate_limited",
    detail: `Rate limit of ${ctx.rateLimit} requests per ${ctx.config.rateLimitWindowSeconds} seconds exceeded. Retry after ${retryAfterSeconds} seconds.`,
    retry_after_seconds: retryAfterSeconds,
  });
}

/** The `Stageline-Upsert` result a (replayed) upsert answer carries. @throws Error when it carries none. */
function upsertResultOf(headers: Record<string, string> | undefined): UpsertResult {
  const value = headers?.[UPSERT_RESULT_HEADER];
  if (!(UPSERT_RESULTS as readonly string[]).includes(value ?? "")) throw new Error("upsert answer without a Stageline-Upsert result");
  return value as UpsertResult;
}

/** The operations of the key `auth` (its company, its scopes) for the request `request`. */
export function inProcessOperations(ctx: AppContext, auth: AuthContext, request: McpRequestInfo): StagelineOperations {
  const { rateLimited, toolCallBudget } = request;
  const companyId = auth.company.id;
  /** Scope check, rate limit, error mapping: what the REST edge does around every route. */
  const op = <T>(scopes: Scope[] | "any", fn: () => Promise<T>): Promise<T> =>
    guarded(async () => {
      if (rateLimited !== undefined) throw rateLimitedError(ctx, rateLimited);
      if (toolCallBudget) {
        if (toolCallBudget.remaining <= 0) throw rateLimitedError(ctx, toolCallBudget.retryAfterSeconds);
        toolCallBudget.remaining -= 1;
      }
      if (scopes !== "any") assertScope(auth, scopes);
      return fn();
    }).catch((err: unknown) => {
      if (err instanceof OperationError && request.requestId) err.problem.request_id ??= request.requestId;
      throw err;
    });
  /**
   * A create with an optional idempotency key, fingerprinted as the REST create at `path` with `body`: the answer
   * `run` gives, or the key's stored answer (its headers too); a stored error answer rejects with its problem.
   */
  const idempotent = async (
    path: string,
    body: unknown,
    key: string | undefined,
    run: (claim?: IdempotencyClaim) => Promise<CreatedResponse>,
  ): Promise<CreatedResponse> => {
    if (key === undefined) return run();
    const outcome = await createIdempotently(ctx, companyId, key, { method: "POST", path: `${API_BASE_PATH}${path}`, body }, run);
    if (outcome.created) return outcome.created;
    const { status, body: text, headers } = outcome.stored;
    const stored = JSON.parse(text) as unknown;
    if (status >= 400) throw new OperationError(toolProblemOfProblem(stored as Problem));
    return { status, body: stored, ...(headers ? { headers } : {}) };
  };
  /** A create answered `201` with the resource `run` makes (or the stored one). */
  const create = async <T>(path: string, body: unknown, key: string | undefined, run: (claim?: IdempotencyClaim) => Promise<T>): Promise<T> =>
    (await idempotent(path, body, key, async (claim) => ({ status: 201, body: await run(claim) }))).body as T;

  return {
    scopes: async () => auth.scopes,
    listItems: (request) =>
      op(["items:read"], async () => {
        const query = parseInput(ItemListQuerySchema, request, "arguments");
        return pageOf(await items.listItemRows(ctx.prisma, companyId, query), query.limit, toItemResponse);
      }),
    getItem: (itemId) => op(["items:read"], () => items.getItem(ctx.prisma, companyId, itemId)),
    createItem: (body, key) =>
      op(["items:write"], () => create("/items", body, key, (claim) => items.createItem(ctx, companyId, parseInput(ItemCreateSchema, body), claim))),
    updateItem: (itemId, body) => op(["items:write"], () => items.updateItem(ctx, companyId, itemId, parseInput(ItemUpdateSchema, body))),
    deleteItem: (itemId, version) =>
      op(["items:write"], async () => {
        const query = parseInput(ItemDeleteQuerySchema, { version }, "arguments");
        const actor = actorOfAuth(auth);
        await deleteItem(ctx, companyId, itemId, { actor, ip: request.ip, version: query.version });
      }),
    upsertItem: (body, key) =>
      op(["items:write"], async () => {
        const answer = await idempotent("/items/upsert", body, key, async (claim) => {
          const { result, item } = await upsertItem(ctx, companyId, parseInput(ItemUpsertSchema, body), claim);
          return { status: result === "created" ? 201 : 200, body: item, headers: upsertHeaders(result) };
        });
        return { result: upsertResultOf(answer.headers), item: answer.body as Item };
      }),
    checkDuplicates: (body) => op(["items:read"], () => checkDuplicates(ctx.prisma, companyId, parseInput(DuplicateCheckSchema, body))),
    listTasks: (request) =>
      op(["tasks:read"], async () => {
        const { is_completed, ...rest } = request;
        const query = parseInput(TaskListQuerySchema, { ...rest, is_completed: is_completed === undefined ? undefined : String(is_completed) }, "arguments");
        return pageOf(await tasks.listTasks(ctx, companyId, query), query.limit, (row) => row.task);
      }),
    getTask: (taskId) => op(["tasks:read"], () => tasks.getTask(ctx, companyId, taskId)),
    createTask: (body, key) =>
      op(["tasks:write"], () =>
        create("/tasks", body, key, (claim) => tasks.createTask(ctx, companyId, auth.keyId, parseInput(TaskCreateSchema, body), claim)),
      ),
    updateTask: (taskId, body) => op(["tasks:write"], () => tasks.updateTask(ctx, companyId, taskId, parseInput(TaskUpdateSchema, body))),
    listNotes: (request) =>
      op(["items:read"], async () => {
        const { pinned, ...rest } = request;
        const query = parseInput(NoteListQuerySchema, { ...rest, pinned: pinned === undefined ? undefined : String(pinned) }, "arguments");
        return pageOf(await notes.listNotes(ctx, companyId, query), query.limit, toNoteResponse);
      }),
    createNote: (body, key) =>
      op(["items:write"], () => create("/notes", body, key, (claim) => notes.createNote(ctx, companyId, auth.keyId, parseInput(NoteCreateSchema, body), claim))),
    updateNote: (noteId, body) => op(["items:write"], () => notes.updateNote(ctx, companyId, noteId, parseInput(NoteUpdateSchema, body))),
    deleteNote: (noteId, version) =>
      op(["items:write"], async () => {
        const query = parseInput(NoteDeleteQuerySchema, { version }, "arguments");
        await notes.deleteNote(ctx, companyId, noteId, query.version);
      }),
    listUsers: (request) =>
      op("any", async () => {
        const query = parseInput(UserListQuerySchema, request, "arguments");
        return pageOrderedBy(await listPeople(ctx.prisma, companyId, query), query.limit, encodeDirectoryCursor, (row) => row.user);
      }),
    listEvents: (request) =>
      op(["items:read", "tasks:read"], async () => {
        const query = parseInput(EventListQuerySchema, request, "arguments");
        const page = await listEvents(ctx, companyId, auth.scopes, query);
        const next = page.next === null ? null : "after" in page.next ? page.next.after : page.next.cursor;
        return { data: page.events, next_cursor: next };
      }),
    describePipelines: () =>
      op("any", async () => {
        const list = await pipelines.listPipelines(ctx.prisma, companyId);
        return Promise.all(
          list.map(async (p) => {
            const stages = await pipelines.listStages(ctx.prisma, companyId, p.id);
            const withStatuses = await Promise.all(
              stages.map(async (s) => ({ id: s.id, name: s.name, statuses: await pipelines.listStatuses(ctx.prisma, companyId, p.id, s.id) })),
            );
            return { id: p.id, name: p.name, stages: withStatuses, fields: await pipelines.listCustomFields(ctx.prisma, companyId, p.id) };
          }),
        );
      }),
    subscribeWebhook: (body, key) =>
      op(["hooks:manage"], () => create("/webhooks", body, key, (claim) => hooks.subscribe(ctx, companyId, parseInput(WebhookSubscribeSchema, body), claim))),
    listWebhooks: (request) =>
      op(["hooks:manage"], async () => {
        const query = parseInput(PageQuerySchema, request, "arguments");
        return pageOf(await hooks.listSubscriptions(ctx, companyId, query), query.limit, hooks.toSubscriptionResponse);
      }),
    unsubscribeWebhook: (webhookId) => op(["hooks:manage"], () => hooks.unsubscribe(ctx, companyId, webhookId)),
    listWebhookDeliveries: (webhookId, request) =>
      op(["hooks:manage"], async () => {
        const query = parseInput(DeliveryListQuerySchema, request, "arguments");
        return pageOf(await hooks.listDeliveries(ctx, companyId, webhookId, query), query.limit, hooks.toDeliveryResponse);
      }),
  };
}
