/**
 * Event-shaped samples (CONTRACT "Item deletion and erasure": item.deleted has its own sample; "Previous values in
 * update events"): GET /v1/ext/webhooks/sample/{resource}?event=NAME answers that event's delivery body, built from
 * the plain sample (services/samples.ts, the company's newest pipeline and its blueprint) so its fields match real
 * deliveries: `changed_fields` and `previous` for update events, `deleted_at` for item.deleted and note.deleted
 * (`deleted_note_ids` too for item.deleted). Nothing is stored.
 */
import {
  EVENT_RESOURCES,
  type EventName,
  type EventPayload,
  type Item,
  type ItemChangedEvent,
  type Note,
  type NoteChangedEvent,
  type SampleResource,
  type Task,
  type TaskChangedEvent,
} from "@stageline/shared";
import type { AppContext } from "../context";
import * as pipelines from "../db/pipelines";
import { domainError } from "./errors";
import { readBlueprint } from "./item-format";
import { SAMPLE_IDS, sampleCustomFieldValue, sampleItem, sampleNote, sampleTask } from "./samples";

/**
 * The sample delivery body of `event`, an event of `resource`.
 * @throws DomainError 400 `validation_failed` when `event` is an event of the other resource (its body is not this
 * resource's format).
 */
export async function sampleEventPayload(
  ctx: AppContext,
  companyId: string,
  apiKeyId: string,
  resource: SampleResource,
  event: EventName,
): Promise<EventPayload> {
  if (EVENT_RESOURCES[event] !== resource) {
    throw domainError("validation_failed", `${event} delivers the ${EVENT_RESOURCES[event]} format: ask /v1/ext/webhooks/sample/${EVENT_RESOURCES[event]}?event=${event}.`, {
      errors: [{ path: "event", message: `event must be an event of ${resource}.` }],
    });
  }
  if (resource === "tasks") return taskEventSample(sampleTask(apiKeyId), event);
  if (resource === "notes") return noteEventSample(sampleNote(apiKeyId), event);
  return itemEventSample(ctx, companyId, await sampleItem(ctx, companyId), event);
}

/** The body of an item event around the sample item `item` (first stage and status of the newest pipeline). */
async function itemEventSample(ctx: AppContext, companyId: string, item: Item, event: EventName): Promise<EventPayload> {
  if (event === "item.deleted") return { ...item, deleted_at: item.updated_at, deleted_note_ids: [SAMPLE_IDS.note] };
  if (event === "item.created") return item;
  const changedAt = new Date(Date.parse(item.created_at) + 60 * 60 * 1000).toISOString();
  if (event === "item.stage_changed") {
    // Moved from the pipeline's second stage (when it has one) back to the sample's stage: names from the pipeline.
    const pipeline = await pipelines.findNewestPipeline(ctx.prisma, companyId);
    const stages = pipeline ? await pipelines.listStages(ctx.prisma, pipeline.id) : [];
    const from = stages[1];
    const fromStatus = from ? await pipelines.findFirstStatus(ctx.prisma, from.id) : null;
    const body: ItemChangedEvent = {
      ...item,
      updated_at: changedAt,
      version: item.version + 1,
      changed_fields: ["stage", "status"],
      previous: { stage: from?.name ?? "Previous stage", status: fromStatus?.name ?? "Previous status" },
    };
    return body;
  }
  // item.updated: the name and the first custom field of the blueprint changed (that field was unset before).
  const pipeline = await pipelines.findNewestPipeline(ctx.prisma, companyId);
  const field = pipeline ? readBlueprint(pipeline.blueprint).custom_fields[0] : undefined;
  const body: ItemChangedEvent = {
    ...item,
    updated_at: changedAt,
    version: item.version + 1,
    changed_fields: field ? ["name", field.key] : ["name"],
    previous: { stage: item.stage, status: item.status, name: "Sample item (old name)", ...(field ? { [field.key]: null } : {}) },
  };
  if (field && body[field.key] === undefined) body[field.key] = sampleCustomFieldValue(field);
  return body;
}

/** The body of a task event around the sample task `task`. */
function taskEventSample(task: Task, event: EventName): EventPayload {
  if (event === "task.created") return task;
  const changedAt = new Date(Date.parse(task.created_at) + 60 * 60 * 1000).toISOString();
  if (event === "task.completed") {
    const body: TaskChangedEvent = {
      ...task,
      is_completed: true,
      completed_at: changedAt,
      updated_at: changedAt,
      changed_fields: ["is_completed", "completed_at"],
      previous: { is_completed: false, completed_at: null },
    };
    return body;
  }
  const earlierDue = new Date(Date.parse(task.due_at) - 24 * 60 * 60 * 1000).toISOString();
  const body: TaskChangedEvent = {
    ...task,
    updated_at: changedAt,
    changed_fields: ["title", "due_at"],
    previous: { title: "Call Jane", due_at: earlierDue },
  };
  return body;
}

/** The body of a note event around the sample note `note` (CONTRACT "Notes"). */
function noteEventSample(note: Note, event: EventName): EventPayload {
  if (event === "note.created") return note;
  const changedAt = new Date(Date.parse(note.created_at) + 60 * 60 * 1000).toISOString();
  if (event === "note.deleted") return { ...note, deleted_at: changedAt };
  const body: NoteChangedEvent = {
    ...note,
    pinned: true,
    updated_at: changedAt,
    version: note.version + 1,
    changed_fields: ["body", "pinned"],
    previous: { body: "Jane asked for annual billing.", pinned: false },
  };
  return body;
}
