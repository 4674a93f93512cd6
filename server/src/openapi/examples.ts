/**
 * Example values for the OpenAPI document (server/src/openapi/document.ts): one plausible request or response body
 * per contract schema. Each example is parsed with its zod schema by the tests (server/test/openapi.test.ts), and
 * Redocly's `no-invalid-media-type-examples` rule checks them against the generated document, so they cannot drift.
 */
import type {
  DuplicateCheck,
  DuplicateMatch,
  FeedEvent,
  Item,
  ItemCreate,
  ItemUpdate,
  ItemUpsert,
  Me,
  Note,
  NoteCreate,
  NoteUpdate,
  Pipeline,
  PipelineField,
  Stage,
  Status,
  Task,
  User,
  TaskCreate,
  TaskUpdate,
  WebhookDelivery,
  WebhookReplay,
  WebhookReplayResult,
  WebhookSubscribe,
  WebhookSubscription,
  WebhookSubscriptionCreated,
  ItemBatchRequest,
  ItemBatchResponse,
  TaskBatchRequest,
  TaskBatchResponse,
} from "@stageline/shared";

const PIPELINE_ID = "01935d6e-8a1f-7c3b-9e42-5b1d0c7a9f10";
const STAGE_ID = "01935d6e-8a20-7c3b-9e42-5b1d0c7a9f11";
const STATUS_ID = "01935d6e-8a21-7c3b-9e42-5b1d0c7a9f12";
const ITEM_ID = "01935d70-1b2c-7d4e-8f50-6a7b8c9d0e1f";
const TASK_ID = "01935d71-2c3d-7e4f-9051-7b8c9d0e1f20";
const KEY_ID = "01935d6a-0f1e-7a2b-8c3d-4e5f60718293";
const WEBHOOK_ID = "01935d72-3d4e-7f50-a162-8c9d0e1f2031";
const CREATED = "2026-03-01T09:30:00.000Z";

export const EXAMPLE_IDS = { pipeline: PIPELINE_ID, stage: STAGE_ID, status: STATUS_ID, item: ITEM_ID, task: TASK_ID, webhook: WEBHOOK_ID } as const;

export const itemCreateExample: ItemCreate = {
  name: "Acme deal",
  pipeline_id: PIPELINE_ID,
  stage_id: STAGE_ID,
  status_id: STATUS_ID,
  metadata: { email: "ada@acme.example", deal_value: 1500 },
};

export const itemUpdateExample: ItemUpdate = { stage_id: STAGE_ID, version: 1, metadata: { deal_value: 2500 } };

export const itemExample: Item = {
  item_id: ITEM_ID,
  short_id: "SALES-42",
  name: "Acme deal",
  pipeline: "Sales",
  pipeline_id: PIPELINE_ID,
  stage: "Lead",
  stage_id: STAGE_ID,
  status: "Open",
  status_id: STATUS_ID,
  contact_id: null,
  source: "api",
  created_at: CREATED,
  updated_at: CREATED,
  version: 1,
  email: "ada@acme.example",
  deal_value: 1500,
};

/** The upsert body: the create body (CONTRACT "Upsert"); the pipeline matches on `email`. */
export const itemUpsertExample: ItemUpsert = { ...itemCreateExample, metadata: { email: "ada@acme.example", deal_value: 2500 } };

/** The item an upsert updated (`Stageline-Upsert: updated`): the matched item at its next version. */
export const itemUpsertedExample: Item = { ...itemExample, deal_value: 2500, version: 2, updated_at: "2026-03-02T10:00:00.000Z" };

export const duplicateCheckExample: DuplicateCheck = {
  pipeline_id: PIPELINE_ID,
  name: "Acme deal",
  metadata: { email: "ada@acme.example" },
};

export const duplicateMatchExample: DuplicateMatch = { ...itemExample, matched_on: ["email"] };

export const taskCreateExample: TaskCreate = {
  title: "Call Ada about the proposal",
  due_at: "2026-03-02T10:00:00Z",
  assigned_to: "sales-team",
  priority: "high",
  task_type: "call",
  item_id: ITEM_ID,
  duration_minutes: 30,
};

export const taskUpdateExample: TaskUpdate = { is_completed: true, notes: "Ada agreed to the proposal." };

const USER_ID = "01935d69-0e1d-7f2a-8b3c-4d5e6f7081a5";

/** CONTRACT "People": a user of the company (GET /v1/ext/users, a task's `assignee`). */
export const userExample: User = { user_id: USER_ID, name: "Ada Lovelace", email: "ada@example.com" };

export const taskExample: Task = {
  task_id: TASK_ID,
  title: "Call Ada about the proposal",
  description: null,
  due_at: "2026-03-02T10:00:00.000Z",
  priority: "high",
  is_completed: false,
  task_type: "call",
  assigned_to: USER_ID,
  assignee: userExample,
  created_by: KEY_ID,
  item_id: ITEM_ID,
  completed_at: null,
  notes: null,
  duration_minutes: 30,
  reminder_minutes: null,
  created_at: CREATED,
  updated_at: CREATED,
};

export const pipelineExample: Pipeline = { id: PIPELINE_ID, name: "Sales", created_at: CREATED };
export const stageExample: Stage = { id: STAGE_ID, name: "Lead" };
export const statusExample: Status = { id: STATUS_ID, name: "Open" };
export const pipelineFieldExample: PipelineField = { key: "email", label: "Email", type: "email", required: false };

export const meExample: Me = {
  company: { id: "01935d69-0e1d-7f2a-8b3c-4d5e6f708192", name: "Acme Inc." },
  key: { id: KEY_ID, name: "Zapier", scopes: ["items:read", "items:write", "tasks:read", "tasks:write", "hooks:manage"], expires_at: null },
  credential: { type: "key", app: null },
};

export const webhookSubscribeExample: WebhookSubscribe = {
  target_url: "https://hooks.zapier.com/hooks/standard/123/abc",
  event: "item.updated",
  filter: { pipeline_id: PIPELINE_ID, fields: ["stage", "deal_value"] },
};

export const webhookSubscriptionExample: WebhookSubscription = {
  id: WEBHOOK_ID,
  target_url: "https://hooks.zapier.com/hooks/standard/123/abc",
  event: "item.updated",
  created_at: CREATED,
  disabled_at: null,
  disabled_reason: null,
  failing_since: null,
  next_attempt_at: null,
  filter: { pipeline_id: PIPELINE_ID, fields: ["stage", "deal_value"] },
};

export const webhookSubscriptionCreatedExample: WebhookSubscriptionCreated = {
  ...webhookSubscriptionExample,
  secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
};

export const webhookDeliveryExample: WebhookDelivery = {
  id: "01935d73-4e5f-7061-b273-9d0e1f203142",
  event_id: "01935d73-4e5e-7061-b273-9d0e1f203141",
  event: "item.created",
  state: "succeeded",
  attempt_count: 1,
  next_attempt_at: null,
  created_at: CREATED,
  completed_at: "2026-03-01T09:30:00.412Z",
  last_status: 200,
  attempts: [
    {
      attempted_at: "2026-03-01T09:30:00.120Z",
      response_status: 200,
      duration_ms: 292,
      response_excerpt: "{\"status\":\"success\"}",
      error: null,
      next_attempt_at: null,
    },
  ],
};

const NOTE_ID = "01935d72-4c5d-7e6f-8a90-1b2c3d4e5f60";

export const noteCreateExample: NoteCreate = { item_id: ITEM_ID, body: "Ada asked for **annual billing**; send the revised quote by Friday.", pinned: true };

export const noteUpdateExample: NoteUpdate = { pinned: false, version: 1 };

export const noteExample: Note = {
  note_id: NOTE_ID,
  item_id: ITEM_ID,
  body: "Ada asked for **annual billing**; send the revised quote by Friday.",
  pinned: true,
  created_by: KEY_ID,
  created_at: "2026-03-01T09:30:00.000Z",
  updated_at: "2026-03-01T09:30:00.000Z",
  version: 1,
};
export const feedEventExample: FeedEvent = {
  event_id: "01935d73-4e5e-7061-b273-9d0e1f203141",
  event: "item.created",
  occurred_at: CREATED,
  resource_id: ITEM_ID,
  data: { ...itemExample },
};

export const webhookReplayExample: WebhookReplay = { since: "2026-03-01T00:00:00Z", until: "2026-03-02T00:00:00Z", only_failed: true };

export const webhookReplayResultExample: WebhookReplayResult = { count: 12 };
/** CONTRACT "Batch writes": an items batch (create, upsert, update, delete) and its results. */
export const itemBatchRequestExample: ItemBatchRequest = {
  operations: [
    { op: "create", ref: "row-1", ...itemCreateExample },
    { op: "upsert", ref: "row-2", ...itemUpsertExample },
    { op: "update", ref: "row-3", item_id: itemExample.item_id, version: itemExample.version, name: "Acme renewal" },
    { op: "delete", ref: "row-4", item_id: "01935d70-1b2c-7d4e-8f50-6a7b8c9d0e20" },
  ],
  atomic: false,
};
export const itemBatchResponseExample: ItemBatchResponse = {
  results: [
    { index: 0, ref: "row-1", status: 201, item: itemExample, problem: null },
    { index: 1, ref: "row-2", status: 200, item: itemExample, upsert: "updated", problem: null },
    { index: 2, ref: "row-3", status: 200, item: { ...itemExample, name: "Acme renewal", version: itemExample.version + 1 }, problem: null },
    { index: 3, ref: "row-4", status: 204, item: null, problem: null },
  ],
};
/** CONTRACT "Batch writes": a tasks batch and its results. */
export const taskBatchRequestExample: TaskBatchRequest = {
  operations: [
    { op: "create", ref: "row-1", ...taskCreateExample },
    { op: "update", ref: "row-2", task_id: taskExample.task_id, is_completed: true },
  ],
};
export const taskBatchResponseExample: TaskBatchResponse = {
  results: [
    { index: 0, ref: "row-1", status: 201, task: taskExample, problem: null },
    { index: 1, ref: "row-2", status: 200, task: { ...taskExample, is_completed: true }, problem: null },
  ],
};
