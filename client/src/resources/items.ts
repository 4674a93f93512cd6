/**
 * `client.items` (CONTRACT "Client library"; spec "Items", CONTRACT "Lists", "Duplicate check", "Idempotency").
 */
import { requireId, idempotencyKeyOf, unwrap, unwrapPage, type ApiContext, type CreateOptions } from "../api";
import { batchAll, batchRequest, type BatchAllOptions, type BatchOptions } from "../batch";
import { iteratePages, type Page } from "../pagination";
import type { DuplicateMatch, Item, ItemBatchOperation, ItemBatchResult, ItemCreate, ItemDeleteOptions, ItemDuplicateCheck, ItemListQuery, ItemUpdate, ItemUpsert, UpsertOutcome, UpsertResult } from "../types";

/** The values of the `Stageline-Upsert` response header (CONTRACT "Upsert"). */
const UPSERT_RESULTS: readonly UpsertResult[] = ["created", "updated", "unchanged"];

/** Items of the company's pipelines. */
export class Items {
  constructor(private readonly ctx: ApiContext) {}

  /**
   * One page of items, newest first (GET /v1/ext/items; scope `items:read`).
   * @param query filters (`pipeline_id`, `stage_id`, `status_id`, `short_id`, `name`, `q`, `created_after`,
   * `updated_after`), `limit` (1..500, default 100) and `cursor` (a `nextCursor` from an earlier page).
   * @returns `{ data, nextCursor }`; `nextCursor` is null on the last page.
   * @throws StagelineError subclasses (e.g. ValidationError for a bad filter), ConnectionError.
   */
  list(query: ItemListQuery = {}): Promise<Page<Item>> {
    return unwrapPage(this.ctx.read((fetch) => this.ctx.api.GET("/v1/ext/items", { params: { query }, fetch })));
  }

  /**
   * Every item matching `query`, one by one across all pages; a page is fetched only when the caller reaches it, so
   * memory stays flat however many items there are. `for await (const item of client.items.iterate({ pipeline_id }))`.
   * @throws as `list`, from the `next()` that needed the failing page.
   */
  iterate(query: ItemListQuery = {}): AsyncGenerator<Item, void, undefined> {
    return iteratePages((cursor) => this.list({ ...query, cursor }), query.cursor);
  }

  /**
   * One item (GET /v1/ext/items/{item_id}).
   * @throws NotFoundError when no item of this company has that id.
   * @throws TypeError (the promise rejects, nothing is sent) when an id is empty or blank.
   */
  async get(id: string): Promise<Item> {
    const path = { item_id: requireId("id", id) };
    return unwrap(this.ctx.read((fetch) => this.ctx.api.GET("/v1/ext/items/{item_id}", { params: { path }, fetch })));
  }

  /**
   * Creates an item (POST /v1/ext/items; scope `items:write`), always with an `Idempotency-Key` (yours, or a random
   * one reused by every attempt of this call), so a retried create never creates twice.
   * @param body `name`, `pipeline_id`, `stage_id`, optional `status_id` (default: the stage's first), `contact_id`,
   * `source`, `metadata` (custom field values by key).
   * @returns the created item (or the first answer replayed, when the key was used before with the same body).
   * @throws ValidationError (400 bad body; 422 unknown reference, archived pipeline, key reused with another body),
   * ConflictError (409 key still in use after the retries), other StagelineErrors, ConnectionError.
   */
  create(body: ItemCreate, options?: CreateOptions): Promise<Item> {
    const key = idempotencyKeyOf(options);
    return unwrap(this.ctx.keyed((fetch) => this.ctx.api.POST("/v1/ext/items", { body, params: { header: { "Idempotency-Key": key } }, fetch })));
  }

  /**
   * Creates the item, or updates the one item the pipeline's duplicate detection matches (POST
   * /v1/ext/items/upsert; scope `items:write`), atomically on the server. Always sends an `Idempotency-Key` (yours,
   * or a random one generated once for this call and reused by every attempt), so a retried upsert is replayed, not
   * applied twice.
   * @param body the create body: `name`, `pipeline_id`, `stage_id`, optional `status_id`, `contact_id`, `source`,
   * `metadata`; it must carry the values the pipeline's duplicate detection compares (e.g. `metadata.email`). On an
   * update, `source` and `contact_id` left out keep the item's values.
   * @returns `{ result, item }`: `result` is the `Stageline-Upsert` header, `created` (201), `updated` or
   * `unchanged` (200: nothing was written); `item` is the item as it is now.
   * @throws ConflictError (409 `ambiguous_match`: several items match, their ids in the problem's `matches`; or the
   * key still in use after the retries), ValidationError (422 `upsert_unavailable`, unknown reference, archived
   * pipeline, key reused with another body; 400 bad body), other StagelineErrors, ConnectionError; Error when a
   * successful answer lacks a valid `Stageline-Upsert` header (not a Stageline server).
   */
  async upsert(body: ItemUpsert, options?: CreateOptions): Promise<UpsertOutcome> {
    const key = idempotencyKeyOf(options);
    const answer = await this.ctx.keyed((fetch) =>
      this.ctx.api.POST("/v1/ext/items/upsert", { body, params: { header: { "Idempotency-Key": key } }, fetch }),
    );
    const item: Item = await unwrap(Promise.resolve(answer));
    const result = answer.response.headers.get("Stageline-Upsert") as UpsertResult | null;
    if (result === null || !UPSERT_RESULTS.includes(result)) {
      throw new Error(`Stageline: the upsert answer carries no valid Stageline-Upsert header (got ${JSON.stringify(result)})`);
    }
    return { result, item };
  }

  /**
   * Changes an item (PATCH /v1/ext/items/{item_id}; scope `items:write`). Sent once: not retried after a network
   * error or 5xx (it carries no idempotency key); a 429 is still waited out.
   * @param body at least one field; `version` makes it conditional (409 version_conflict when stale).
   * @returns the updated item.
   * @throws NotFoundError, ValidationError, ConflictError (`currentVersion` set), ServerError, ConnectionError.
   * @throws TypeError (the promise rejects, nothing is sent) when an id is empty or blank.
   */
  async update(id: string, body: ItemUpdate): Promise<Item> {
    const path = { item_id: requireId("id", id) };
    return unwrap(this.ctx.unkeyed((fetch) => this.ctx.api.PATCH("/v1/ext/items/{item_id}", { params: { path }, body, fetch })));
  }

  /**
   * Deletes an item for good (DELETE /v1/ext/items/{item_id}; scope `items:write`; CONTRACT "Item deletion and
   * erasure"): its values are erased in the service, its tasks stay unlinked, subscribers get `item.deleted`. Sent
   * once: not retried after a network error or 5xx (a repeat would be a 404 if the first one went through); a 429 is
   * still waited out.
   * @param options `version` makes it conditional (409 version_conflict when stale).
   * @throws NotFoundError (unknown, another company's, or already deleted), ConflictError (`currentVersion` set),
   * ValidationError, ServerError, ConnectionError.
   * @throws TypeError (the promise rejects, nothing is sent) when an id is empty or blank.
   */
  async delete(id: string, options: ItemDeleteOptions = {}): Promise<void> {
    const path = { item_id: requireId("id", id) };
    const query: ItemDeleteOptions = options.version === undefined ? {} : { version: options.version };
    await unwrap(this.ctx.unkeyed((fetch) => this.ctx.api.DELETE("/v1/ext/items/{item_id}", { params: { path, query }, fetch })));
  }

  /**
   * The items that look like duplicates of `body` by the pipeline's duplicate-detection settings, best match first
   * (POST /v1/ext/items/check-duplicates; scope `items:read`; creates nothing, so it is retried like a read).
   * @returns the matches, each with `matched_on` (the field names that matched); empty when none.
   * @throws ValidationError (422 unknown pipeline), other StagelineErrors, ConnectionError.
   */
  checkDuplicates(body: ItemDuplicateCheck): Promise<DuplicateMatch[]> {
    return unwrap(this.ctx.read((fetch) => this.ctx.api.POST("/v1/ext/items/check-duplicates", { body, fetch })));
  }

  /**
   * The items with this short ID (exact, case-insensitive: at most one) or this name (exact after trimming,
   * case-insensitive), newest first, across all pages.
   * @throws TypeError (the promise rejects, nothing is sent) when the short ID or name is not a string or is empty
   * or blank (the list filter would then be no filter and every item would match); otherwise as `list`.
   */
  async find(by: { shortId: string } | { name: string }): Promise<Item[]> {
    const key = by !== null && typeof by === "object" && "shortId" in by ? "shortId" : "name";
    const value: unknown = (by as Record<string, unknown> | null | undefined)?.[key];
    if (typeof value !== "string" || value.trim() === "") throw new TypeError(`Stageline: items.find needs a non-empty \`shortId\` or \`name\``);
    const query: ItemListQuery = key === "shortId" ? { short_id: value } : { name: value };
    const found: Item[] = [];
    for await (const item of this.iterate(query)) found.push(item);
    return found;
  }

  /**
   * Runs 1..100 item operations in one request (POST /v1/ext/items/batch; scope `items:write`; one unit of the rate
   * limit; CONTRACT "Batch writes"), always with an `Idempotency-Key` (yours, or a random one reused by every attempt),
   * so a retried batch is replayed, not applied twice.
   * @param operations `{ op: "create" | "upsert", ...body }`, `{ op: "update", item_id, ...patch }`, `{ op: "delete",
   * item_id, version? }`, each with an optional `ref` echoed in its result.
   * @param options `atomic` (all or nothing), `idempotencyKey`.
   * @returns one result per operation, in order: `{ index, ref, status, item, problem, upsert? }`, `status` being what
   * the operation alone would have answered (a failed operation has its 4xx and `problem`; the others still apply
   * unless `atomic`).
   * @throws BatchFailedError (422 `batch_failed`, atomic only: nothing applied; `results` says which failed),
   * ValidationError (400 malformed envelope; 422 key reused with other operations), other StagelineErrors,
   * ConnectionError; TypeError (nothing sent) for fewer than 1 or more than 100 operations.
   */
  async batch(operations: ItemBatchOperation[], options: BatchOptions = {}): Promise<ItemBatchResult[]> {
    const { body, key } = batchRequest(operations, options);
    const answer = await unwrap(this.ctx.keyed((fetch) => this.ctx.api.POST("/v1/ext/items/batch", { body, params: { header: { "Idempotency-Key": key } }, fetch })));
    return answer.results;
  }

  /**
   * Any number of item operations as batches of up to 100 (`size`), sent one after the other in order through the
   * rate-limit gate, with `onProgress` after each, and per-batch `Idempotency-Key`s `<idempotencyKey>:<n>` so a
   * re-run of the same work replays the batches already applied (see `BatchAllOptions`). 10,000 operations are 100
   * requests: under two windows of the default 60-per-minute limit (the server's time per batch then decides the rest).
   * @returns every result in operation order, `index` the position in `operations`.
   * @throws as `batch` (a failed atomic batch stops it: the earlier batches stay applied), TypeError for bad options,
   * the signal's reason once aborted.
   */
  batchAll(operations: readonly ItemBatchOperation[], options?: BatchAllOptions<ItemBatchResult>): Promise<ItemBatchResult[]> {
    return batchAll((chunk, batchOptions) => this.batch(chunk, batchOptions), operations, options);
  }
}
