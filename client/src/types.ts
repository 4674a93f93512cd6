/**
 * The client's public record, body and query types: aliases into the types openapi-typescript generated from the
 * served OpenAPI document (generated/openapi.ts), never hand-written copies (CONTRACT "Client library").
 */
import type { components, operations, webhooks } from "./generated/openapi";

type Schemas = components["schemas"];
type JsonBody<Op extends keyof operations> = operations[Op] extends { requestBody: { content: { "application/json": infer B } } } ? B : never;
type Query<Op extends keyof operations> = NonNullable<operations[Op]["parameters"]["query"]>;
type BatchResultOf<Op extends keyof operations> = operations[Op] extends { responses: { 200: { content: { "application/json": { results: (infer R)[] } } } } } ? R : never;
type ListOf<Op extends keyof operations> = operations[Op] extends { responses: { 200: { content: { "application/json": (infer R)[] } } } } ? R : never;

/** An item (GET /v1/ext/items/{item_id}); custom field values sit beside the built-in fields. */
export type Item = Schemas["Item"];
/** An item found by the duplicate check, with `matched_on` naming the fields that matched. */
export type DuplicateMatch = Schemas["DuplicateMatch"];
/** A task. */
export type Task = Schemas["Task"];
/**
 * A console user of the company (GET /v1/ext/users): `{ user_id, name, email }`, `name` being the display name the
 * user set (`null` until then). A task whose `assigned_to` is a `user_id` carries that user as its `assignee`.
 */
export type User = ListOf<"listUsers">;
/**
 * A note on an item (GET /v1/ext/notes/{note_id}): `body` is Markdown text (1..65,536 characters), `pinned` puts it
 * first; `version` grows by one on every change (optimistic locking, as for items).
 */
export type Note = Schemas["Note"];
/** A pipeline (GET /v1/ext/pipelines). */
export type Pipeline = Schemas["Pipeline"];
/** A stage of a pipeline. */
export type Stage = Schemas["Stage"];
/** A status a stage offers. */
export type Status = Schemas["Status"];
/** A pipeline's custom field (`pipelines.fields`). */
export type PipelineField = Schemas["PipelineField"];
/** A REST hook subscription. */
export type WebhookSubscription = Schemas["WebhookSubscription"];
/**
 * A subscription's server-side filter (`pipeline_id`, `stage_id`, `fields`): only the events it passes are sent
 * (CONTRACT "Subscription filters"). `webhooks.subscribe` takes it as `filter`; subscriptions return it (`null` when none).
 */
export type WebhookFilter = NonNullable<WebhookSubscription["filter"]>;
/**
 * Body of an `item.updated` / `item.stage_changed` delivery: the item after the change, `changed_fields`, and
 * `previous` with each changed field's value before it (`stage` and `status` names always).
 */
export type ItemChangedEvent = Schemas["ItemChangedEvent"];
/** Body of a `task.updated` / `task.completed` delivery: the task after the change, `changed_fields` and `previous`. */
export type TaskChangedEvent = Schemas["TaskChangedEvent"];
/** Body of an `item.deleted` delivery: the item's last state plus `deleted_at`. */
export type ItemDeletedEvent = Schemas["ItemDeletedEvent"];
/** Body of a `note.updated` delivery: the note after the change, `changed_fields` (`body`, `pinned`) and `previous`. */
export type NoteChangedEvent = Schemas["NoteChangedEvent"];
/** Body of a `note.deleted` delivery: the note's last state plus `deleted_at`. */
export type NoteDeletedEvent = Schemas["NoteDeletedEvent"];
/** An event name of the catalogue (what `webhooks.subscribe` takes as `event`). */
export type WebhookEventName = keyof webhooks & string;
/**
 * The delivery body of each event, from the document's `webhooks` section: `verifyWebhook<WebhookEventPayloads["item.updated"]>(...)`.
 */
export type WebhookEventPayloads = {
  [E in WebhookEventName]: webhooks[E] extends { post: { requestBody: { content: { "application/json": infer B } } } } ? B : never;
};
/** A subscription with its signing `secret` (`whsec_...`, shown once: subscribe and rotate-secret answers). */
export type WebhookSubscriptionCreated = Schemas["WebhookSubscriptionCreated"];
/** One delivery of an event to a subscription, with its attempts. */
export type WebhookDelivery = Schemas["WebhookDelivery"];
/** The query of `items.delete` (DELETE /v1/ext/items/{item_id}): optional `version` (optimistic locking). */
export type ItemDeleteOptions = Query<"deleteItem">;
/** The query of `notes.delete` (DELETE /v1/ext/notes/{note_id}): optional `version` (optimistic locking). */
export type NoteDeleteOptions = Query<"deleteNote">;
/**
 * One event of the events feed (GET /v1/ext/events; CONTRACT "Events feed"): `event_id` (the `webhook-id` of its
 * deliveries), `event` (its name), `occurred_at` (ISO 8601), `resource_id` (the item, task or note) and `data`, exactly
 * the body a delivery of it carries (`WebhookEventPayloads[event]`), or the erased body `{ item_id, erased: true }`
 * once its item was deleted.
 */
export type FeedEvent = ListOf<"listEvents">;
/** Body of `webhooks.replay` (POST /v1/ext/webhooks/{webhook_id}/replay): `since`, optional `until`, `only_failed` (default true). */
export type WebhookReplay = JsonBody<"replayWebhookDeliveries">;
/** Answer of `webhooks.replay`: `count`, the deliveries queued again (at most 1,000 a call: call again when it is 1,000). */
export type WebhookReplayResult = operations["replayWebhookDeliveries"]["responses"][202]["content"]["application/json"];
/**
 * One operation of `items.batch` (CONTRACT "Batch writes"): `{ op: "create", ...createBody }`, `{ op: "upsert",
 * ...upsertBody }`, `{ op: "update", item_id, ...patchBody }` or `{ op: "delete", item_id, version? }`, each with an
 * optional `ref` (your label, echoed in its result, e.g. a CSV row number).
 */
export type ItemBatchOperation = JsonBody<"batchItems">["operations"][number];
/** One operation of `tasks.batch`: `{ op: "create", ...createBody }` or `{ op: "update", task_id, ...patchBody }`, optional `ref`. */
export type TaskBatchOperation = JsonBody<"batchTasks">["operations"][number];
/**
 * One result of `items.batch`, in operation order: `index` (position of the operation), `ref`, `status` (what the
 * operation alone would have answered: 201, 200, 204, 4xx; 424 in a failed atomic batch), `item` (or null),
 * `problem` (or null) and, for a successful upsert, `upsert` (`created`, `updated`, `unchanged`).
 */
export type ItemBatchResult = BatchResultOf<"batchItems">;
/** One result of `tasks.batch`: `index`, `ref`, `status`, `task` (or null), `problem` (or null). */
export type TaskBatchResult = BatchResultOf<"batchTasks">;
/** The company and API key the client authenticates as (GET /v1/ext/me). */
export type Me = Schemas["Me"];
/** One failing field of a problem (`errors[]`). */
export type ProblemFieldError = Schemas["ProblemFieldError"];

/** Body of `items.create` (POST /v1/ext/items). */
export type ItemCreate = JsonBody<"createItem">;
/** Body of `items.update` (PATCH /v1/ext/items/{item_id}): at least one field. */
export type ItemUpdate = JsonBody<"updateItem">;
/** Body of `items.checkDuplicates` (POST /v1/ext/items/check-duplicates). */
export type ItemDuplicateCheck = JsonBody<"checkDuplicateItems">;
/** Body of `items.upsert` (POST /v1/ext/items/upsert): the create body. */
export type ItemUpsert = JsonBody<"upsertItem">;
/** What `items.upsert` did: the `Stageline-Upsert` header (`created` with 201, `updated`/`unchanged` with 200). */
export type UpsertResult = components["headers"]["StagelineUpsertCreated"] | components["headers"]["StagelineUpsertUpdatedOrUnchanged"];
/** The answer of `items.upsert`: what it did and the item as it is now. */
export interface UpsertOutcome {
  result: UpsertResult;
  item: Item;
}
/** Body of `tasks.create` (POST /v1/ext/tasks). */
export type TaskCreate = JsonBody<"createTask">;
/** Body of `tasks.update` (PATCH /v1/ext/tasks/{task_id}): at least one field. */
export type TaskUpdate = JsonBody<"updateTask">;
/** Body of `notes.create` (POST /v1/ext/notes): `item_id`, `body`, optional `pinned`. */
export type NoteCreate = JsonBody<"createNote">;
/** Body of `notes.update` (PATCH /v1/ext/notes/{note_id}): `body` and/or `pinned`, optional `version`. */
export type NoteUpdate = JsonBody<"updateNote">;
/** Body of `webhooks.subscribe` (POST /v1/ext/webhooks). */
export type WebhookSubscribe = JsonBody<"subscribeWebhook">;

/** Query of `items.list` / `items.iterate` (filters, `limit` 1..500, `cursor`). */
export type ItemListQuery = Query<"listItems">;
/** Query of `tasks.list` / `tasks.iterate`. */
export type TaskListQuery = Query<"listTasks">;
/** Query of `notes.list` / `notes.iterate` (`item_id`, `pinned`, `updated_after`, `limit`, `cursor`). */
export type NoteListQuery = Query<"listNotes">;
/** Query of `users.list` / `users.iterate` (`limit`, `cursor`). */
export type UserListQuery = Query<"listUsers">;
/** Query of `webhooks.list` / `webhooks.iterate`. */
export type WebhookListQuery = Query<"listWebhooks">;
/** Query of `events.list` / `events.iterate` (`event`, `resource_id`, `pipeline_id`, `after`, `limit`, `cursor`). */
export type EventListQuery = Query<"listEvents">;
/** Query of `webhooks.deliveries`. */
export type WebhookDeliveryListQuery = Query<"listWebhookDeliveries">;

/** Every problem-details body the API answers with (RFC 9457), whatever the status. */
export type Problem = {
  [Name in keyof components["responses"]]: components["responses"][Name] extends { content: { "application/problem+json": infer P } } ? P : never;
}[keyof components["responses"]];
/** A stable machine `code` of a problem. */
export type ProblemCode = Problem["code"];
