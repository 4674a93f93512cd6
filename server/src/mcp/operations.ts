/**
 * The MCP tools' operations in-process (CONTRACT "MCP server"): `StagelineOperations` of @stageline/mcp for one
 * authenticated API key, calling the service layer as the REST routes do (same parsing with the contract schemas,
 * same scope checks, same idempotency keys through `createIdempotently`), so `/v1/ext/mcp` never calls the server
 * over HTTP. A DomainError becomes an `OperationError` with the problem's `code`, `detail`, `errors`.
 */
import {
  API_BASE_PATH,
  DeliveryListQuerySchema,
  DomainError,
  DuplicateCheckSchema,
  ItemCreateSchema,
  ItemListQuerySchema,
  ItemUpdateSchema,
  PageQuerySchema,
  TaskCreateSchema,
  TaskListQuerySchema,
  TaskUpdateSchema,
  WebhookSubscribeSchema,
  parseInput,
  type KeysetPosition,
  type Problem,
  type Scope,
} from "@stageline/shared";
import { OperationError, type Page, type StagelineOperations, type ToolProblem } from "@stageline/mcp";
import type { AppContext } from "../context";
import { createIdempotently, type CreatedResponse } from "../http/idempotency";
import { assertScope, type AuthContext } from "../services/api-keys";
import { checkDuplicates } from "../services/duplicates";
import { IN_USE_RETRY_AFTER_SECONDS, type IdempotencyClaim } from "../services/idempotency";
import { toItemResponse } from "../services/item-format";
import * as items from "../services/items";
import { toPage } from "../services/keyset-page";
import * as pipelines from "../services/pipelines";
import { toTaskResponse } from "../services/task-format";
import * as tasks from "../services/tasks";
import * as hooks from "../services/webhook-subscriptions";

/** The problem of a DomainError as a tool reports it. */
export function toolProblemOf(err: DomainError): ToolProblem {
  const problem: ToolProblem = { code: err.code, detail: err.detail };
  if (err.extras.errors?.length) problem.errors = err.extras.errors;
  if (err.extras.current_version !== undefined) problem.current_version = err.extras.current_version;
  if (err.code === "idempotency_key_in_use") problem.retry_after_seconds = IN_USE_RETRY_AFTER_SECONDS;
  return problem;
}

/** Runs `fn`, turning a DomainError into an OperationError. */
async function guarded<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof DomainError) throw new OperationError(toolProblemOf(err));
    throw err;
  }
}

/** A list page (rows fetched with `limit + 1`) in the tools' shape. */
function pageOf<R extends KeysetPosition, T>(rows: R[], limit: number, format: (row: R) => T): Page<T> {
  const page = toPage(rows, limit);
  return { data: page.items.map(format), next_cursor: page.next };
}

/**
 * The operations of the key `auth` (its company, its scopes).
 * @param rateLimited seconds until the key's rate-limit window resets when this request was over the limit: every
 * operation then fails with `rate_limited` (CONTRACT "MCP server": 429 becomes a tool error that says when to retry).
 */
export function inProcessOperations(ctx: AppContext, auth: AuthContext, rateLimited?: number): StagelineOperations {
  const companyId = auth.company.id;
  /** Scope check, rate limit, error mapping: what the REST edge does around every route. */
  const op = <T>(scopes: Scope[] | "any", fn: () => Promise<T>): Promise<T> =>
    guarded(async () => {
      if (rateLimited !== undefined) {
        throw new OperationError({
          code: "rate_limited",
          detail: `Rate limit of ${ctx.rateLimit} requests per ${ctx.config.rateLimitWindowSeconds} seconds exceeded. Retry after ${rateLimited} seconds.`,
          retry_after_seconds: rateLimited,
        });
      }
      if (scopes !== "any") assertScope(auth, scopes);
      return fn();
    });
  /** A create with an optional idempotency key, fingerprinted as the REST create at `path` with `body`. */
  const create = async <T>(path: string, body: unknown, key: string | undefined, run: (claim?: IdempotencyClaim) => Promise<T>): Promise<T> => {
    if (key === undefined) return run();
    const request = { method: "POST", path: `${API_BASE_PATH}${path}`, body };
    const outcome = await createIdempotently(ctx, companyId, key, request, async (claim): Promise<CreatedResponse> => ({ status: 201, body: await run(claim) }));
    if (outcome.created) return outcome.created.body as T;
    const stored = JSON.parse(outcome.stored.body) as T | Problem;
    if (outcome.stored.status >= 400) {
      const p = stored as Problem;
      throw new OperationError({ code: p.code, detail: p.detail, ...(p.errors?.length ? { errors: p.errors } : {}) });
    }
    return stored as T;
  };

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
    checkDuplicates: (body) => op(["items:read"], () => checkDuplicates(ctx.prisma, companyId, parseInput(DuplicateCheckSchema, body))),
    listTasks: (request) =>
      op(["tasks:read"], async () => {
        const { is_completed, ...rest } = request;
        const query = parseInput(TaskListQuerySchema, { ...rest, is_completed: is_completed === undefined ? undefined : String(is_completed) }, "arguments");
        return pageOf(await tasks.listTasks(ctx, companyId, query), query.limit, toTaskResponse);
      }),
    getTask: (taskId) => op(["tasks:read"], () => tasks.getTask(ctx, companyId, taskId)),
    createTask: (body, key) =>
      op(["tasks:write"], () =>
        create("/tasks", body, key, (claim) => tasks.createTask(ctx, companyId, auth.keyId, parseInput(TaskCreateSchema, body), claim)),
      ),
    updateTask: (taskId, body) => op(["tasks:write"], () => tasks.updateTask(ctx, companyId, taskId, parseInput(TaskUpdateSchema, body))),
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
