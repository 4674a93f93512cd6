/**
 * `client.tasks` (CONTRACT "Client library"; spec "Tasks", CONTRACT "Tasks", "Lists", "Idempotency").
 */
import { requireId, idempotencyKeyOf, unwrap, unwrapPage, type ApiContext, type CreateOptions } from "../api";
import { batchAll, batchRequest, type BatchAllOptions, type BatchOptions } from "../batch";
import { iteratePages, type Page } from "../pagination";
import type { Task, TaskBatchOperation, TaskBatchResult, TaskCreate, TaskListQuery, TaskUpdate } from "../types";

/** Tasks of the company (optionally attached to an item). */
export class Tasks {
  constructor(private readonly ctx: ApiContext) {}

  /**
   * One page of tasks, newest first (GET /v1/ext/tasks; scope `tasks:read`).
   * @param query `item_id`, `is_completed` (`"true"`/`"false"`), `assigned_to`, `due_before`, `due_after`, `limit`
   * (1..500), `cursor`.
   * @returns `{ data, nextCursor }`.
   * @throws StagelineError subclasses, ConnectionError.
   */
  list(query: TaskListQuery = {}): Promise<Page<Task>> {
    return unwrapPage(this.ctx.read((fetch) => this.ctx.api.GET("/v1/ext/tasks", { params: { query }, fetch })));
  }

  /**
   * Every task matching `query` across all pages, fetching a page only when the caller reaches it.
   * @throws as `list`.
   */
  iterate(query: TaskListQuery = {}): AsyncGenerator<Task, void, undefined> {
    return iteratePages((cursor) => this.list({ ...query, cursor }), query.cursor);
  }

  /**
   * One task (GET /v1/ext/tasks/{task_id}).
   * @throws NotFoundError when no task of this company has that id.
   * @throws TypeError (the promise rejects, nothing is sent) when an id is empty or blank.
   */
  async get(id: string): Promise<Task> {
    const path = { task_id: requireId("id", id) };
    return unwrap(this.ctx.read((fetch) => this.ctx.api.GET("/v1/ext/tasks/{task_id}", { params: { path }, fetch })));
  }

  /**
   * Creates a task (POST /v1/ext/tasks; scope `tasks:write`) with an `Idempotency-Key` (yours, or a random one
   * reused by every attempt).
   * @returns the created task.
   * @throws ValidationError (400, 422 e.g. an item of another company), other StagelineErrors, ConnectionError.
   */
  create(body: TaskCreate, options?: CreateOptions): Promise<Task> {
    const key = idempotencyKeyOf(options);
    return unwrap(this.ctx.keyed((fetch) => this.ctx.api.POST("/v1/ext/tasks", { body, params: { header: { "Idempotency-Key": key } }, fetch })));
  }

  /**
   * Changes a task (PATCH /v1/ext/tasks/{task_id}); sent once (not retried after network errors or 5xx).
   * @param body at least one field; `is_completed: true` sets `completed_at`, `false` clears it.
   * @returns the updated task.
   * @throws NotFoundError, ValidationError, ServerError, ConnectionError.
   * @throws TypeError (the promise rejects, nothing is sent) when an id is empty or blank.
   */
  async update(id: string, body: TaskUpdate): Promise<Task> {
    const path = { task_id: requireId("id", id) };
    return unwrap(this.ctx.unkeyed((fetch) => this.ctx.api.PATCH("/v1/ext/tasks/{task_id}", { params: { path }, body, fetch })));
  }

  /**
   * Marks a task completed (`update(id, { is_completed: true })`).
   * @returns the updated task.
   * @throws as `update`.
   */
  complete(id: string): Promise<Task> {
    return this.update(id, { is_completed: true });
  }

  /**
   * Creates or updates 1..100 tasks in one request (POST /v1/ext/tasks/batch; scope `tasks:write`; one unit of the
   * rate limit; CONTRACT "Batch writes"), always with an `Idempotency-Key` (yours, or a random one reused by every
   * attempt).
   * @param operations `{ op: "create", ...body }` or `{ op: "update", task_id, ...patch }`, each with an optional `ref`.
   * @param options `atomic` (all or nothing), `idempotencyKey`.
   * @returns one result per operation, in order: `{ index, ref, status, task, problem }`.
   * @throws BatchFailedError (422 `batch_failed`, atomic only), ValidationError, other StagelineErrors,
   * ConnectionError; TypeError (nothing sent) for fewer than 1 or more than 100 operations.
   */
  async batch(operations: TaskBatchOperation[], options: BatchOptions = {}): Promise<TaskBatchResult[]> {
    const { body, key } = batchRequest(operations, options);
    const answer = await unwrap(this.ctx.keyed((fetch) => this.ctx.api.POST("/v1/ext/tasks/batch", { body, params: { header: { "Idempotency-Key": key } }, fetch })));
    return answer.results;
  }

  /**
   * Any number of task operations as batches of up to 100, in order, with progress and derived per-batch keys (as
   * `items.batchAll`).
   * @returns every result in operation order, `index` the position in `operations`.
   * @throws as `batch`, TypeError for bad options, the signal's reason once aborted.
   */
  batchAll(operations: readonly TaskBatchOperation[], options?: BatchAllOptions<TaskBatchResult>): Promise<TaskBatchResult[]> {
    return batchAll((chunk, batchOptions) => this.batch(chunk, batchOptions), operations, options);
  }
}
