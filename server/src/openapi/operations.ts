/**
 * The registry of every operation of the external API (`/v1/ext`), next to the routes that serve them: method, path,
 * operationId, summary, scopes, the contract's zod schemas of the path, query and body, the success response and the
 * problem codes each can answer. server/src/openapi/document.ts turns it into the OpenAPI 3.1 document;
 * server/test/openapi.test.ts fails when a route under `/v1/ext` has no entry here (or an entry names no route).
 *
 * Sources: spec "Endpoints", CONTRACT "Responses", "Lists", "Errors", "Scopes and limits", "Idempotency".
 */
import { z } from "zod";
import {
  DeliveryListQuerySchema,
  DuplicateCheckSchema,
  EventListQuerySchema,
  FeedEventSchema,
  MAX_REPLAY_DELIVERIES,
  WebhookReplayResultSchema,
  WebhookReplaySchema,
  DuplicateMatchSchema,
  ItemBatchRequestSchema,
  ItemBatchResponseSchema,
  ItemBatchResultSchema,
  ItemCreateSchema,
  ItemDeleteQuerySchema,
  ItemListQuerySchema,
  ItemChangedEventSchema,
  ItemDeletedEventSchema,
  ItemSchema,
  ItemUpdateSchema,
  ItemUpsertSchema,
  MeSchema,
  NoteChangedEventSchema,
  NoteCreateSchema,
  NoteDeleteQuerySchema,
  NoteDeletedEventSchema,
  NoteListQuerySchema,
  NoteSchema,
  NoteUpdateSchema,
  NUL_FREE_PATTERN,
  PageQuerySchema,
  SampleQuerySchema,
  PipelineFieldSchema,
  PipelineSchema,
  StageSchema,
  StatusSchema,
  TaskBatchRequestSchema,
  TaskBatchResponseSchema,
  TaskBatchResultSchema,
  TaskCreateSchema,
  TaskListQuerySchema,
  TaskChangedEventSchema,
  TaskSchema,
  TaskUpdateSchema,
  UserListQuerySchema,
  UserSchema,
  WebhookDeliverySchema,
  WebhookSubscribeSchema,
  WebhookSubscriptionCreatedSchema,
  WebhookSubscriptionSchema,
  type ErrorCode,
  type Scope,
  type UpsertResult,
} from "@stageline/shared";
import * as ex from "./examples";

/**
 * CONTRACT "Versioning and compatibility" / "HTTP semantics, order of checks": the document's `info.version`, the date
 * of the newest entry of docs/api/CHANGELOG.md (server/test/openapi-compat.test.ts fails when they differ).
 */
export const API_VERSION = "2026-12-08";

/** HTTP methods the API uses (lower case, as OpenAPI path items name them). */
export type ApiMethod = "get" | "post" | "patch" | "delete";

/** A schema with an example value (the example must parse with the schema). */
export interface ExampleSchema {
  schema: z.ZodType;
  example: unknown;
}

/** One operation of the external API. */
export interface ApiOperation {
  method: ApiMethod;
  /** OpenAPI path template, e.g. `/v1/ext/items/{item_id}`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  /** The tag that groups it in the reference (one of {@link API_TAGS}). */
  tag: ApiTag;
  /**
   * Who may call it: `public` (no key, e.g. the OpenAPI document itself), `any` (any valid key), or the scopes of
   * which the key needs one (spec "Authentication", CONTRACT "Scopes and limits").
   */
  access: "public" | "any" | readonly Scope[];
  /** Path parameters: an object schema whose keys are the `{names}` of the path. */
  path_params?: z.ZodObject;
  /** Query parameters (an object schema; each key one parameter). */
  query?: z.ZodObject;
  /** JSON request body. */
  body?: ExampleSchema;
  /** The success response. */
  success: ApiSuccess;
  /** Further success responses of an operation that answers more than one (the upsert: 201 created, 200 updated). */
  moreSuccess?: readonly ApiSuccess[];
  /** Problem codes this operation answers beyond the ones every keyed operation can answer (see document.ts). */
  errors?: readonly ErrorCode[];
  /** Accepts `Idempotency-Key` (CONTRACT "Idempotency"). */
  idempotent?: boolean;
  /**
   * Extra members of the problem body of the status that answers `code` (a batch's 422 `batch_failed` carries
   * `results`); `id` is appended to the shared response's id.
   */
  problemExtension?: { code: ErrorCode; id: string; shape: Record<string, z.ZodType> };
  /**
   * Marks the operation deprecated (CONTRACT "Versioning and compatibility"): `deprecated: true` in the document, and
   * every response carries `Deprecation`, `Sunset` (once `sunset` is set) and `Link: <...>; rel="deprecation"`
   * (http/deprecation.ts).
   */
  deprecated?: ApiDeprecation;
}

/** One success response of an operation. */
export interface ApiSuccess {
  status: 200 | 201 | 202 | 204;
  description: string;
  /** JSON body (absent for 204). */
  body?: ExampleSchema;
  /** `Link: <...>; rel="next"` while more remain (keyset-paginated lists). */
  link?: boolean;
  /** `Location` of the created resource. */
  location?: boolean;
  /** The upsert's `Stageline-Upsert` header, with the values this response carries (CONTRACT "Upsert"). */
  upsertResult?: readonly UpsertResult[];
}

/** When and why an operation is deprecated. */
export interface ApiDeprecation {
  /** The day it was deprecated, `YYYY-MM-DD` (UTC midnight is the `Deprecation` instant, RFC 9745). */
  since: string;
  /** The day it stops working, `YYYY-MM-DD` (the `Sunset` HTTP-date, RFC 8594); absent until decided. */
  sunset?: string;
  /** The docs/api/CHANGELOG.md entry that announces it: its date, `YYYY-MM-DD` (the `Link` target's fragment). */
  changelogEntry: string;
}

/** The reference's groups, with their descriptions. */
export const API_TAGS = {
  Items: "Pipeline items: records that sit in a stage and a status of a pipeline (spec \"Items\").",
  Tasks: "Tasks, optionally linked to an item (spec \"Tasks\").",
  Notes: "Notes on items: Markdown text of up to 65,536 characters, pinned or not (CONTRACT \"Notes\"). Reads need `items:read`, writes `items:write`.",
  Pipelines: "Read-only lookups of pipelines, their stages, statuses and custom fields (spec \"Pipelines\").",
  Webhooks: "REST hooks: subscriptions that push events to a target URL, their deliveries and sample payloads.",
  People: "The company's console users, e.g. to pick a task's `assigned_to` (CONTRACT \"People\").",
  Events: "The events feed: every event of the retention period, to catch up without a public URL.",
  Account: "The authenticated company and API key.",
  Reference: "This API description.",
} as const;
/** A tag name. */
export type ApiTag = keyof typeof API_TAGS;

/**
 * Bodies of GET /webhooks/sample/{resource}: the resource, plus, with `?event=`, that event's members (optional, so
 * the documented body stays the baseline's plus optional fields: additive).
 */
const ItemSampleSchema = ItemSchema.extend({
  changed_fields: ItemChangedEventSchema.shape.changed_fields.optional(),
  previous: ItemChangedEventSchema.shape.previous.optional(),
  deleted_at: ItemDeletedEventSchema.shape.deleted_at.optional(),
});
const TaskSampleSchema = TaskSchema.extend({
  changed_fields: TaskChangedEventSchema.shape.changed_fields.optional(),
  previous: TaskChangedEventSchema.shape.previous.optional(),
});
const NoteSampleSchema = NoteSchema.extend({
  changed_fields: NoteChangedEventSchema.shape.changed_fields.optional(),
  previous: NoteChangedEventSchema.shape.previous.optional(),
  deleted_at: NoteDeletedEventSchema.shape.deleted_at.optional(),
});

const id = (description: string) => z.string().min(1).max(255).regex(NUL_FREE_PATTERN).meta({ description });
const itemPath = z.object({ item_id: id("The item's `item_id`.") });
const taskPath = z.object({ task_id: id("The task's `task_id`.") });
const notePath = z.object({ note_id: id("The note's `note_id`.") });
const pipelinePath = z.object({ pipeline_id: id("The pipeline's `id`.") });
const stagePath = pipelinePath.extend({ stage_id: id("The stage's `id` (a stage of that pipeline).") });
const webhookPath = z.object({ webhook_id: id("The subscription's `id`.") });
const eventPath = z.object({ event_id: id("The event's `event_id` (the `webhook-id` of its deliveries).") });
const deliveryPath = webhookPath.extend({ delivery_id: id("The delivery's `id`.") });

const list = <T extends z.ZodType>(schema: T, example: unknown): ExampleSchema => ({ schema: z.array(schema), example: [example] });
const one = (schema: z.ZodType, example: unknown): ExampleSchema => ({ schema, example });
const BASE = "/v1/ext";

/** What both batch operations say (CONTRACT "Batch writes"). */
const BATCH_DESC =
  "Runs 1..100 operations, each exactly as its single request (same validation, status, problem body and events, in operation order), in ONE request for the rate limit. " +
      "`results` holds one entry per operation in order: `status` is what the operation alone would answer (201, 200, 204, 4xx) with its resource or `problem`. " +
      "Without `atomic` each operation runs on its own (a failure does not stop the next). With `atomic: true` all run in one transaction: when one fails, none is applied, no event is written, and the answer is `422 batch_failed` with the same `results` (the failed operation with its status and problem, every other one `424`). " +
      "An `Idempotency-Key` covers the whole batch: a retry replays the whole response. The body stays under 1 MiB.";

/** Every operation of the external API, in reference order. */
export const API_OPERATIONS: readonly ApiOperation[] = [
  {
    method: "get", path: `${BASE}/items`, operationId: "listItems", summary: "List items", tag: "Items", access: ["items:read"],
    description: "The company's items, newest first (`created_at` desc, then id desc), filtered by the query. Keyset pagination: follow the `Link` header's `next` URL.",
    query: ItemListQuerySchema,
    success: { status: 200, description: "A page of items.", body: list(ItemSchema, ex.itemExample), link: true },
  },
  {
    method: "post", path: `${BASE}/items`, operationId: "createItem", summary: "Create an item", tag: "Items", access: ["items:write"],
    description: "Creates an item in a stage (and status) of a pipeline and emits `item.created`. Without `status_id` the item gets the stage's first status. An archived pipeline takes no new items (422 `pipeline_archived`).",
    body: one(ItemCreateSchema, ex.itemCreateExample),
    success: { status: 201, description: "The created item.", body: one(ItemSchema, ex.itemExample), location: true },
    errors: ["invalid_reference", "pipeline_archived", "payload_erased"],
    idempotent: true,
  },
  {
    method: "post", path: `${BASE}/items/check-duplicates`, operationId: "checkDuplicateItems", summary: "Find duplicates of an item", tag: "Items", access: ["items:read"],
    description: "Finds items matching the body by the pipeline's duplicate-detection configuration, best match first, without creating anything.",
    body: one(DuplicateCheckSchema, ex.duplicateCheckExample),
    success: { status: 200, description: "Matching items (empty when none), each naming the fields that matched.", body: list(DuplicateMatchSchema, ex.duplicateMatchExample) },
    errors: ["invalid_reference"],
  },
  {
    method: "post", path: `${BASE}/items/upsert`, operationId: "upsertItem", summary: "Create or update an item", tag: "Items", access: ["items:write"],
    description:
      "Creates the item, or updates the one item the pipeline's duplicate detection matches (exactly as the duplicate check matches), atomically: " +
      "concurrent upserts of the same key make one item. Body = the create body. No match: `201` with `Location` and `item.created`. " +
      "One match: its `name`, `stage_id`, `status_id`, `metadata` (merged), `contact_id` and `source` are applied as a PATCH would (`200`; " +
      "`item.updated`/`item.stage_changed` and a new `version` only when something changed); `source` and `contact_id` left out keep the " +
      "item's values (`source` is not reset to `api`). The `Stageline-Upsert` header says `created`, `updated` or `unchanged`. " +
      "Several matches: `409 ambiguous_match` with `matches`. No duplicate detection on the pipeline, or no value it compares in the body: `422 upsert_unavailable`.",
    body: one(ItemUpsertSchema, ex.itemUpsertExample),
    success: {
      status: 201, description: "No item matched: the item was created (`Stageline-Upsert: created`).",
      body: one(ItemSchema, ex.itemExample), location: true, upsertResult: ["created"],
    },
    moreSuccess: [
      {
        status: 200, description: "One item matched: it was updated (`Stageline-Upsert: updated`) or already had these values (`unchanged`: nothing written or emitted).",
        body: one(ItemSchema, ex.itemUpsertedExample), upsertResult: ["updated", "unchanged"],
      },
    ],
    errors: ["invalid_reference", "pipeline_archived", "ambiguous_match", "upsert_unavailable", "version_conflict"],
    idempotent: true,
  },
  {
    method: "get", path: `${BASE}/items/{item_id}`, operationId: "getItem", summary: "Get an item", tag: "Items", access: ["items:read"],
    path_params: itemPath,
    success: { status: 200, description: "The item.", body: one(ItemSchema, ex.itemExample) },
    errors: ["not_found"],
  },
  {
    method: "patch", path: `${BASE}/items/{item_id}`, operationId: "updateItem", summary: "Update an item", tag: "Items", access: ["items:write"],
    description: "Changes the given fields; moves the item when `stage_id`/`status_id` are given. With `version`, a stale version is a 409 carrying `current_version`.",
    path_params: itemPath,
    body: one(ItemUpdateSchema, ex.itemUpdateExample),
    success: { status: 200, description: "The updated item.", body: one(ItemSchema, ex.itemExample) },
    errors: ["not_found", "version_conflict", "invalid_reference"],
  },
  {
    method: "delete", path: `${BASE}/items/{item_id}`, operationId: "deleteItem", summary: "Delete an item", tag: "Items", access: ["items:write"],
    description:
      "Deletes the item for good and erases its values everywhere in the service (earlier event bodies, the delivery log, stored Idempotency-Key responses). " +
      "Its tasks stay, unlinked (`item_id: null`, each with a `task.updated`); one `item.deleted` carries its last state plus `deleted_at` and `deleted_note_ids`. Its notes are deleted and erased with it (no `note.deleted` each). " +
      "With `version`, a stale version is a 409 carrying `current_version`. Takes no body. Afterwards the item is 404 everywhere and its `short_id` is never reused.",
    path_params: itemPath,
    query: ItemDeleteQuerySchema,
    success: { status: 204, description: "Deleted; its values are erased." },
    errors: ["not_found", "version_conflict"],
  },
  {
    method: "post", path: `${BASE}/items/batch`, operationId: "batchItems", summary: "Create, update, upsert or delete items in a batch", tag: "Items", access: ["items:write"],
    description:
      "Operations: `create` (the create body), `upsert` (the upsert body; `upsert` in the result says `created`, `updated` or `unchanged`), `update` (`item_id` and the PATCH body), `delete` (`item_id`, optional `version`). " +
      BATCH_DESC,
    body: one(ItemBatchRequestSchema, ex.itemBatchRequestExample),
    success: { status: 200, description: "One result per operation, in operation order.", body: one(ItemBatchResponseSchema, ex.itemBatchResponseExample) },
    errors: ["batch_failed", "payload_erased"],
    idempotent: true,
    problemExtension: { code: "batch_failed", id: "ItemBatch", shape: { results: z.array(ItemBatchResultSchema).optional() } },
  },
  {
    method: "get", path: `${BASE}/tasks`, operationId: "listTasks", summary: "List tasks", tag: "Tasks", access: ["tasks:read"],
    description: "The company's tasks, newest first, filtered by the query. Keyset pagination: follow the `Link` header's `next` URL.",
    query: TaskListQuerySchema,
    success: { status: 200, description: "A page of tasks.", body: list(TaskSchema, ex.taskExample), link: true },
  },
  {
    method: "post", path: `${BASE}/tasks`, operationId: "createTask", summary: "Create a task", tag: "Tasks", access: ["tasks:write"],
    description: "Creates a task (optionally linked to an item of the company) and emits `task.created`.",
    body: one(TaskCreateSchema, ex.taskCreateExample),
    success: { status: 201, description: "The created task.", body: one(TaskSchema, ex.taskExample), location: true },
    errors: ["invalid_reference"],
    idempotent: true,
  },
  {
    method: "post", path: `${BASE}/tasks/batch`, operationId: "batchTasks", summary: "Create or update tasks in a batch", tag: "Tasks", access: ["tasks:write"],
    description: "Operations: `create` (the create body), `update` (`task_id` and the PATCH body). " + BATCH_DESC,
    body: one(TaskBatchRequestSchema, ex.taskBatchRequestExample),
    success: { status: 200, description: "One result per operation, in operation order.", body: one(TaskBatchResponseSchema, ex.taskBatchResponseExample) },
    errors: ["batch_failed"],
    idempotent: true,
    problemExtension: { code: "batch_failed", id: "TaskBatch", shape: { results: z.array(TaskBatchResultSchema).optional() } },
  },
  {
    method: "get", path: `${BASE}/tasks/{task_id}`, operationId: "getTask", summary: "Get a task", tag: "Tasks", access: ["tasks:read"],
    path_params: taskPath,
    success: { status: 200, description: "The task.", body: one(TaskSchema, ex.taskExample) },
    errors: ["not_found"],
  },
  {
    method: "patch", path: `${BASE}/tasks/{task_id}`, operationId: "updateTask", summary: "Update a task", tag: "Tasks", access: ["tasks:write"],
    description: "Changes the given fields. `is_completed: true` sets `completed_at` (if not completed yet), `false` clears it.",
    path_params: taskPath,
    body: one(TaskUpdateSchema, ex.taskUpdateExample),
    success: { status: 200, description: "The updated task.", body: one(TaskSchema, ex.taskExample) },
    errors: ["not_found", "invalid_reference"],
  },
  {
    method: "get", path: `${BASE}/notes`, operationId: "listNotes", summary: "List notes", tag: "Notes", access: ["items:read"],
    description: "The company's notes, newest first, filtered by the query (`item_id`, `pinned`, `updated_after`; combined with AND). Keyset pagination: follow the `Link` header's `next` URL.",
    query: NoteListQuerySchema,
    success: { status: 200, description: "A page of notes.", body: list(NoteSchema, ex.noteExample), link: true },
  },
  {
    method: "post", path: `${BASE}/notes`, operationId: "createNote", summary: "Create a note", tag: "Notes", access: ["items:write"],
    description:
      "Adds a note to an item of the company and emits `note.created`. `created_by` is the API key's id. " +
      "Replaying the `Idempotency-Key` of a create whose note was deleted since is `410 payload_erased` (its stored response was erased with it).",
    body: one(NoteCreateSchema, ex.noteCreateExample),
    success: { status: 201, description: "The created note.", body: one(NoteSchema, ex.noteExample), location: true },
    errors: ["invalid_reference", "payload_erased"],
    idempotent: true,
  },
  {
    method: "get", path: `${BASE}/notes/{note_id}`, operationId: "getNote", summary: "Get a note", tag: "Notes", access: ["items:read"],
    path_params: notePath,
    success: { status: 200, description: "The note.", body: one(NoteSchema, ex.noteExample) },
    errors: ["not_found"],
  },
  {
    method: "patch", path: `${BASE}/notes/{note_id}`, operationId: "updateNote", summary: "Update a note", tag: "Notes", access: ["items:write"],
    description: "Changes `body` and/or `pinned` (a note's `item_id` never changes) and emits `note.updated` with `changed_fields` and `previous`. With `version`, a stale version is a 409 carrying `current_version`.",
    path_params: notePath,
    body: one(NoteUpdateSchema, ex.noteUpdateExample),
    success: { status: 200, description: "The updated note.", body: one(NoteSchema, ex.noteExample) },
    errors: ["not_found", "version_conflict"],
  },
  {
    method: "delete", path: `${BASE}/notes/{note_id}`, operationId: "deleteNote", summary: "Delete a note", tag: "Notes", access: ["items:write"],
    description:
      "Deletes the note for good and erases its body everywhere in the service (earlier event bodies, the delivery log, stored Idempotency-Key responses). " +
      "One `note.deleted` carries its last state plus `deleted_at`. With `version`, a stale version is a 409 carrying `current_version`. Takes no body.",
    path_params: notePath,
    query: NoteDeleteQuerySchema,
    success: { status: 204, description: "Deleted; its body is erased." },
    errors: ["not_found", "version_conflict"],
  },
  {
    method: "get", path: `${BASE}/pipelines`, operationId: "listPipelines", summary: "List pipelines", tag: "Pipelines", access: "any",
    success: { status: 200, description: "All pipelines of the company that are not archived (an archived pipeline's stages, statuses and fields stay readable by id).", body: list(PipelineSchema, ex.pipelineExample) },
  },
  {
    method: "get", path: `${BASE}/pipelines/{pipeline_id}/stages`, operationId: "listStages", summary: "List a pipeline's stages", tag: "Pipelines", access: "any",
    path_params: pipelinePath,
    success: { status: 200, description: "The pipeline's stages, in order.", body: list(StageSchema, ex.stageExample) },
    errors: ["not_found"],
  },
  {
    method: "get", path: `${BASE}/pipelines/{pipeline_id}/stages/{stage_id}/statuses`, operationId: "listStatuses", summary: "List a stage's statuses", tag: "Pipelines", access: "any",
    path_params: stagePath,
    success: { status: 200, description: "The statuses the stage offers, in order.", body: list(StatusSchema, ex.statusExample) },
    errors: ["not_found"],
  },
  {
    method: "get", path: `${BASE}/pipelines/{pipeline_id}/fields`, operationId: "listPipelineFields", summary: "List a pipeline's custom fields", tag: "Pipelines", access: "any",
    description: "The pipeline blueprint's custom fields in blueprint order (an addition to the spec), so an integration can build inputs for them.",
    path_params: pipelinePath,
    success: { status: 200, description: "The custom fields.", body: list(PipelineFieldSchema, ex.pipelineFieldExample) },
    errors: ["not_found"],
  },
  {
    method: "post", path: `${BASE}/webhooks`, operationId: "subscribeWebhook", summary: "Subscribe a REST hook", tag: "Webhooks", access: ["hooks:manage"],
    description:
      "Sends every `event` to `target_url` until unsubscribed. The response's `secret` (shown once) signs the deliveries (Standard Webhooks). " +
      "An optional `filter` narrows the events sent: `pipeline_id` (items of that pipeline; task events: tasks linked to an item of it), " +
      "`stage_id` (with `pipeline_id`, item events: items in that stage after the change), `fields` (`item.updated`/`task.updated`: only when one of " +
      "them is in `changed_fields`). An event the filter excludes is not queued at all. Ids and field names that do not resolve for the company are " +
      "`422 invalid_reference`.",
    body: one(WebhookSubscribeSchema, ex.webhookSubscribeExample),
    success: { status: 201, description: "The subscription with its signing secret.", body: one(WebhookSubscriptionCreatedSchema, ex.webhookSubscriptionCreatedExample) },
    errors: ["invalid_reference"],
    idempotent: true,
  },
  {
    method: "get", path: `${BASE}/webhooks`, operationId: "listWebhooks", summary: "List REST hook subscriptions", tag: "Webhooks", access: ["hooks:manage"],
    query: PageQuerySchema,
    success: { status: 200, description: "A page of subscriptions, newest first.", body: list(WebhookSubscriptionSchema, ex.webhookSubscriptionExample), link: true },
  },
  {
    method: "delete", path: `${BASE}/webhooks/{webhook_id}`, operationId: "unsubscribeWebhook", summary: "Unsubscribe a REST hook", tag: "Webhooks", access: ["hooks:manage"],
    path_params: webhookPath,
    success: { status: 204, description: "Unsubscribed; no further events are sent to its target URL." },
    errors: ["not_found"],
  },
  {
    method: "post", path: `${BASE}/webhooks/{webhook_id}/rotate-secret`, operationId: "rotateWebhookSecret", summary: "Rotate a subscription's signing secret", tag: "Webhooks", access: ["hooks:manage"],
    path_params: webhookPath,
    success: { status: 200, description: "The subscription with its new secret (shown once).", body: one(WebhookSubscriptionCreatedSchema, ex.webhookSubscriptionCreatedExample) },
    errors: ["not_found"],
  },
  {
    method: "get", path: `${BASE}/webhooks/{webhook_id}/deliveries`, operationId: "listWebhookDeliveries", summary: "List a subscription's deliveries", tag: "Webhooks", access: ["hooks:manage"],
    description:
      "Delivery attempts newest first, optionally filtered by `state`. Keyset pagination: follow the `Link` header's `next` URL. " +
      "A delivered or failed delivery is kept for 30 days after it ended (the server's `WEBHOOK_RETENTION_DAYS`), then deleted with its attempts; a pending one is never deleted.",
    path_params: webhookPath,
    query: DeliveryListQuerySchema,
    success: { status: 200, description: "A page of deliveries.", body: list(WebhookDeliverySchema, ex.webhookDeliveryExample), link: true },
    errors: ["not_found"],
  },
  {
    method: "post", path: `${BASE}/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver`, operationId: "redeliverWebhook", summary: "Send a delivery again", tag: "Webhooks", access: ["hooks:manage"],
    description:
      "Puts the delivery back in the queue, due now, its attempts kept. A delivery deleted by retention (30 days after it ended) is `404`; " +
      "one whose body was erased because its item was deleted is `410 payload_erased`.",
    path_params: deliveryPath,
    success: { status: 202, description: "The delivery, queued to be sent again.", body: one(WebhookDeliverySchema, ex.webhookDeliveryExample) },
    errors: ["not_found", "invalid_reference", "payload_erased"],
  },
  {
    method: "post", path: `${BASE}/webhooks/{webhook_id}/replay`, operationId: "replayWebhookDeliveries", summary: "Replay a range of deliveries", tag: "Webhooks", access: ["hooks:manage"],
    description:
      "Queues again the subscription's deliveries of the events that occurred from `since` (inclusive) to `until` (exclusive, default now): failed ones only, " +
      "or delivered ones too with `only_failed: false` (Standard Webhooks' \"replay failures of a range\"). They go out through the normal dispatcher, in event order, " +
      `each with its event's \`webhook-id\`. At most ${MAX_REPLAY_DELIVERIES} per call, the oldest first; a \`count\` of ${MAX_REPLAY_DELIVERIES} means more may remain: call again. ` +
      "Deliveries whose body was erased (their item was deleted) are not replayed, nor those deleted by retention.",
    path_params: webhookPath,
    body: { schema: WebhookReplaySchema, example: ex.webhookReplayExample },
    success: { status: 202, description: "How many deliveries were queued again.", body: one(WebhookReplayResultSchema, ex.webhookReplayResultExample) },
    errors: ["not_found", "invalid_reference"],
  },
  {
    method: "get", path: `${BASE}/webhooks/sample/items`, operationId: "getSampleItem", summary: "Get a sample item payload", tag: "Webhooks", access: ["hooks:manage", "items:read"],
    description:
      "A sample item event payload built from the company's pipeline blueprint, so its field names and types match real payloads. Nothing is stored. " +
      "With `event`, the body of that event: `changed_fields` and `previous` for `item.updated`/`item.stage_changed`, `deleted_at` and `deleted_note_ids` for `item.deleted`; a task or note event is a 400.",
    query: SampleQuerySchema,
    success: { status: 200, description: "A sample Item, or the sample body of the event asked for (an Item with `changed_fields`/`previous` or `deleted_at`).", body: one(ItemSampleSchema, ex.itemExample) },
  },
  {
    method: "get", path: `${BASE}/webhooks/sample/tasks`, operationId: "getSampleTask", summary: "Get a sample task payload", tag: "Webhooks", access: ["hooks:manage", "tasks:read"],
    description:
      "A sample task event payload. Nothing is stored. With `event`, the body of that event: `changed_fields` and `previous` for `task.updated`/`task.completed`; an item or note event is a 400.",
    query: SampleQuerySchema,
    success: { status: 200, description: "A sample Task, or the sample body of the event asked for (a Task with `changed_fields` and `previous`).", body: one(TaskSampleSchema, ex.taskExample) },
  },
  {
    method: "get", path: `${BASE}/users`, operationId: "listUsers", summary: "List users", tag: "People", access: "any",
    description:
      "The company's console users (no role, no security state), by display `name` (users without one last), then `email`. A task whose `assigned_to` is a `user_id` shows that user as its `assignee`. Keyset pagination: follow the `Link` header's `next` URL.",
    query: UserListQuerySchema,
    success: { status: 200, description: "A page of users.", body: list(UserSchema, ex.userExample), link: true },
  },
  {
    method: "get", path: `${BASE}/webhooks/sample/notes`, operationId: "getSampleNote", summary: "Get a sample note payload", tag: "Webhooks", access: ["hooks:manage", "items:read"],
    description:
      "A sample note event payload. Nothing is stored. With `event`, the body of that event: `changed_fields` and `previous` for `note.updated`, `deleted_at` for `note.deleted`; an item or task event is a 400.",
    query: SampleQuerySchema,
    success: { status: 200, description: "A sample Note, or the sample body of the event asked for (a Note with `changed_fields`/`previous` or `deleted_at`).", body: one(NoteSampleSchema, ex.noteExample) },
  },
  {
    method: "get", path: `${BASE}/events`, operationId: "listEvents", summary: "List events (the events feed)", tag: "Events", access: ["items:read", "tasks:read"],
    description:
      "Every event of the company kept for the retention period (30 days, the server's `WEBHOOK_RETENTION_DAYS`), whether or not a subscription exists; " +
      "`data` is exactly the body a delivery of it carries (the erased body once its item, or its note, was deleted). A key sees the events its scopes read: " +
      "`items:read` item and note events, `tasks:read` task events. Newest first, keyset pagination with `cursor`. " +
      "With `after=<event_id>`: the events committed after that one, oldest first, in the order deliveries follow; continue with the `Link` header's `next` URL, " +
      "and once no `Link` comes, poll again later with the last `event_id` received. An `after` no longer retained is `410 cursor_expired` (events may have been missed: resynchronize). " +
      "A page examines a bounded number of events, so with filters that match little it may be short, or empty, while a `Link` still follows.",
    query: EventListQuerySchema,
    success: { status: 200, description: "A page of events.", body: list(FeedEventSchema, ex.feedEventExample), link: true },
    errors: ["cursor_expired"],
  },
  {
    method: "get", path: `${BASE}/events/{event_id}`, operationId: "getEvent", summary: "Get an event", tag: "Events", access: ["items:read", "tasks:read"],
    description: "One retained event, as the feed shows it. An event the key's scopes cannot read is `404`, as another company's.",
    path_params: eventPath,
    success: { status: 200, description: "The event.", body: one(FeedEventSchema, ex.feedEventExample) },
    errors: ["not_found"],
  },
  {
    method: "get", path: `${BASE}/me`, operationId: "getMe", summary: "Who am I", tag: "Account", access: "any",
    description: "The company and API key of the request (Zapier's auth test and connection label). `key.id` is what tasks record as `created_by`.",
    success: { status: 200, description: "The authenticated company and key.", body: one(MeSchema, ex.meExample) },
  },
  {
    method: "get", path: `${BASE}/openapi.json`, operationId: "getOpenApiDocument", summary: "This API description", tag: "Reference", access: "public",
    description: "The OpenAPI 3.1 document of this API, generated from the zod contract. Needs no key and is not rate-limited. A browsable reference is at `/docs`.",
    success: { status: 200, description: "The OpenAPI document.", body: one(z.record(z.string(), z.unknown()), { openapi: "3.1.0" }) },
  },
];
