/**
 * The operations the MCP tools call: the external API's operations (spec "Items", "Tasks", "Pipelines", "REST
 * hooks") as one interface with two implementations, so the tool definitions exist once:
 * - in the server (`/v1/ext/mcp`), an adapter that calls the service layer in-process for the authenticated key;
 * - in the stdio program (`stageline-mcp`), `ClientOperations` (client-operations.ts) over `@stageline/client`.
 * Inputs and results are the contract's shapes (`@stageline/shared`); a failure is an `OperationError` carrying the
 * problem's `code`, `detail` and `errors` (CONTRACT "Errors").
 */
import type {
  DuplicateCheck,
  DuplicateMatch,
  ErrorCode,
  FeedEvent,
  Item,
  ItemCreate,
  ItemUpdate,
  ItemUpsert,
  Note,
  NoteCreate,
  NoteUpdate,
  PipelineField,
  ProblemFieldError,
  Scope,
  Task,
  TaskCreate,
  TaskUpdate,
  UpsertResult,
  User,
  WebhookDelivery,
  WebhookSubscribe,
  WebhookSubscription,
  WebhookSubscriptionCreated,
} from "@stageline/shared";
import { isRequestId } from "@stageline/shared";

/** One page of a list: the records and the cursor of the next page (null on the last one). CONTRACT "Lists". */
export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

/** Paging of a list call: `limit` records at most (1..500), after `cursor` when given. */
export interface PageRequest {
  limit: number;
  cursor?: string | undefined;
}

/** GET /items filters (shared `itemListFilters`) plus paging. */
export interface ItemListRequest extends PageRequest {
  pipeline_id?: string | undefined;
  stage_id?: string | undefined;
  status_id?: string | undefined;
  short_id?: string | undefined;
  name?: string | undefined;
  q?: string | undefined;
  created_after?: string | undefined;
  updated_after?: string | undefined;
}

/** GET /tasks filters (shared `taskListFilters`, `is_completed` as a boolean) plus paging. */
export interface TaskListRequest extends PageRequest {
  item_id?: string | undefined;
  is_completed?: boolean | undefined;
  assigned_to?: string | undefined;
  due_before?: string | undefined;
  due_after?: string | undefined;
}

/** GET /notes filters (shared `noteListFilters`, `pinned` as a boolean) plus paging. CONTRACT "Notes". */
export interface NoteListRequest extends PageRequest {
  item_id?: string | undefined;
  pinned?: boolean | undefined;
  updated_after?: string | undefined;
}

/**
 * GET /events filters (shared `EventListQuerySchema`: `event` comma-separated names) plus paging (CONTRACT "Events
 * feed"). With `after` (an `event_id`) the page is the events committed after it, oldest first, and the result's
 * `next_cursor` is the `event_id` to pass as the next `after`; otherwise newest first and `next_cursor` is a `cursor`.
 */
export interface EventListRequest extends PageRequest {
  event?: string | undefined;
  resource_id?: string | undefined;
  pipeline_id?: string | undefined;
  after?: string | undefined;
}

/** GET /webhooks/{id}/deliveries: paging and an optional state filter. */
export interface DeliveryListRequest extends PageRequest {
  state?: "pending" | "succeeded" | "failed" | undefined;
}

/** A pipeline with everything an agent needs to place an item: stages with their statuses, and the custom fields. */
export interface PipelineDescription {
  id: string;
  name: string;
  stages: { id: string; name: string; statuses: { id: string; name: string }[] }[];
  fields: PipelineField[];
}

/** What an upsert did (the `Stageline-Upsert` header) and the item as it is now. CONTRACT "Upsert". */
export interface ItemUpsertOutcome {
  result: UpsertResult;
  item: Item;
}

/** The operations behind the tools. Each rejects with `OperationError` for an API error. */
export interface StagelineOperations {
  /** The API key's scopes (decides which tools exist). */
  scopes(): Promise<readonly Scope[]>;
  listItems(request: ItemListRequest): Promise<Page<Item>>;
  getItem(itemId: string): Promise<Item>;
  /** POST /items; `idempotencyKey` is sent as `Idempotency-Key` (CONTRACT "Idempotency"). */
  createItem(body: ItemCreate, idempotencyKey?: string): Promise<Item>;
  updateItem(itemId: string, body: ItemUpdate): Promise<Item>;
  /**
   * DELETE /items/{item_id} (CONTRACT "Item deletion and erasure"): final, erases the item's values. With `version`
   * a stale version is `version_conflict`; an unknown, another company's or already deleted item is `not_found`.
   */
  deleteItem(itemId: string, version?: number): Promise<void>;
  /**
   * POST /items/upsert (CONTRACT "Upsert"): create, or update the one item the pipeline's duplicate rule matches;
   * `idempotencyKey` is sent as `Idempotency-Key`. Several matches: `ambiguous_match` (with `matches`); no duplicate
   * detection or nothing to compare: `upsert_unavailable`.
   */
  upsertItem(body: ItemUpsert, idempotencyKey?: string): Promise<ItemUpsertOutcome>;
  checkDuplicates(body: DuplicateCheck): Promise<DuplicateMatch[]>;
  listTasks(request: TaskListRequest): Promise<Page<Task>>;
  getTask(taskId: string): Promise<Task>;
  createTask(body: TaskCreate, idempotencyKey?: string): Promise<Task>;
  updateTask(taskId: string, body: TaskUpdate): Promise<Task>;
  /** GET /notes (CONTRACT "Notes"): newest first. */
  listNotes(request: NoteListRequest): Promise<Page<Note>>;
  /** POST /notes; `idempotencyKey` is sent as `Idempotency-Key`. An item of another company is `invalid_reference`. */
  createNote(body: NoteCreate, idempotencyKey?: string): Promise<Note>;
  /** PATCH /notes/{note_id}; a stale `version` is `version_conflict` with `current_version`. */
  updateNote(noteId: string, body: NoteUpdate): Promise<Note>;
  /** DELETE /notes/{note_id} (final; the body is erased); with `version` a stale version is `version_conflict`. */
  deleteNote(noteId: string, version?: number): Promise<void>;
  /** GET /users (CONTRACT "People"): the company's users, by name then email; any valid key. */
  listUsers(request: PageRequest): Promise<Page<User>>;
  /**
   * GET /events (CONTRACT "Events feed"): the events the key's scopes read (`items:read` item and note events,
   * `tasks:read` task events); see `EventListRequest` for `after` and `next_cursor`. An `after` no longer retained is
   * `cursor_expired`; a key with neither scope `insufficient_scope`.
   */
  listEvents(request: EventListRequest): Promise<Page<FeedEvent>>;
  /** Every pipeline with stages, statuses and custom fields (GET /pipelines, .../stages, .../statuses, .../fields). */
  describePipelines(): Promise<PipelineDescription[]>;
  subscribeWebhook(body: WebhookSubscribe, idempotencyKey?: string): Promise<WebhookSubscriptionCreated>;
  listWebhooks(request: PageRequest): Promise<Page<WebhookSubscription>>;
  unsubscribeWebhook(webhookId: string): Promise<void>;
  listWebhookDeliveries(webhookId: string, request: DeliveryListRequest): Promise<Page<WebhookDelivery>>;
}

/** An API error as a tool reports it (CONTRACT "MCP server": `isError` results carry `code`, `detail`, `errors`). */
export interface ToolProblem {
  code: ErrorCode | "unknown";
  detail: string;
  errors?: ProblemFieldError[];
  /** 409 `version_conflict`: the item's (or note's) current version. */
  current_version?: number;
  /** 429 `rate_limited` (and 409 `idempotency_key_in_use`): seconds to wait before retrying. */
  retry_after_seconds?: number;
  /** 409 `ambiguous_match`: the `item_id`s of the matching items, best match first (CONTRACT "Upsert"). */
  matches?: string[];
  /** The `Request-Id` of the request that failed (CONTRACT "Request ids and the request log"), to quote to support. */
  request_id?: string;
}

/** The members of an RFC 9457 problem body (CONTRACT "Errors") a tool passes on; others are ignored. */
export interface ProblemLike {
  code: string;
  detail: string;
  errors?: unknown;
  current_version?: unknown;
  matches?: unknown;
  request_id?: unknown;
}

/**
 * The ToolProblem of a problem body, for every adapter (a service's error, a stored Idempotency-Key response, a
 * client's error): `code` and `detail`, plus `errors` (when non-empty), `current_version`, `matches` and `request_id`
 * when they have their contract types (a body from the network is not trusted to have them).
 */
export function toolProblemOfProblem(problem: ProblemLike): ToolProblem {
  const result: ToolProblem = { code: problem.code as ToolProblem["code"], detail: problem.detail };
  if (Array.isArray(problem.errors) && problem.errors.length) result.errors = problem.errors as ProblemFieldError[];
  if (typeof problem.current_version === "number") result.current_version = problem.current_version;
  if (Array.isArray(problem.matches) && problem.matches.every((m) => typeof m === "string")) result.matches = problem.matches as string[];
  if (isRequestId(problem.request_id)) result.request_id = problem.request_id;
  return result;
}

/** The error an operation rejects with: the problem, as the tool result will carry it. */
export class OperationError extends Error {
  constructor(readonly problem: ToolProblem) {
    super(problem.detail);
    this.name = "OperationError";
  }
}
