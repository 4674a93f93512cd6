/**
 * Sample payloads (spec "REST hooks": GET /v1/ext/webhooks/sample/items, "a sample item payload ... built from the
 * company's actual pipeline blueprint, so its field names and types match real payloads"). The samples go through
 * the same formatters as real items and tasks (`toItemResponse`, `toTaskResponse`), so they cannot drift from live
 * event bodies. Nothing is stored.
 */
import { DEFAULT_ITEM_SOURCE, type CustomField, type Item, type Note, type SampleResource, type Task, type User } from "@stageline/shared";
import type { AppContext } from "../context";
import * as pipelines from "../db/pipelines";
import type { ItemRecord } from "../db/item-record";
import { readBlueprint, toItemResponse } from "./item-format";
import { toNoteResponse } from "./note-format";
import { toTaskResponse } from "./task-format";

/** Ids of the synthetic records (they name no stored record). */
export const SAMPLE_IDS = {
  item: "sample_item",
  task: "sample_task",
  note: "sample_note",
  pipeline: "sample_pipeline",
  stage: "sample_stage",
  status: "sample_status",
  contact: "sample_contact",
} as const;

/** A plausible value of a custom field's type (valid for the blueprint's value schema). */
export function sampleCustomFieldValue(field: CustomField): unknown {
  switch (field.type) {
    case "text":
      return "Sample text";
    case "email":
      return "jane.doe@example.com";
    case "number":
      return 1500;
    case "boolean":
      return true;
    case "date":
      return "2026-01-15";
    case "datetime":
      return "2026-01-15T09:30:00.000Z";
    case "url":
      return "https://example.com";
    case "phone":
      return "+1 555 010 9999";
    case "select":
      return field.options?.[0] ?? null;
  }
}

/**
 * One sample item in the Item format, from the company's newest pipeline: its name, first stage and first status,
 * `short_id` `<PREFIX>-1`, version 1, source `api`, no contact, and every custom field of its blueprint with a
 * plausible value of the field's type. A company without pipelines gets the built-in fields only.
 */
export async function sampleItem(ctx: AppContext, companyId: string): Promise<Item> {
  const now = new Date();
  const pipeline = await pipelines.findNewestPipeline(ctx.prisma, companyId);
  const record: ItemRecord = {
    id: SAMPLE_IDS.item,
    shortId: "SAMPLE-1",
    name: "Sample item",
    contactId: SAMPLE_IDS.contact,
    source: DEFAULT_ITEM_SOURCE,
    metadata: {},
    version: 1,
    createdAt: now,
    updatedAt: now,
    pipeline: { id: SAMPLE_IDS.pipeline, name: "Sample pipeline", blueprint: {} },
    stage: { id: SAMPLE_IDS.stage, name: "Sample stage" },
    status: { id: SAMPLE_IDS.status, name: "Sample status" },
  };
  if (pipeline) {
    const metadata: Record<string, unknown> = {};
    for (const field of readBlueprint(pipeline.blueprint).custom_fields) metadata[field.key] = sampleCustomFieldValue(field);
    record.shortId = `${pipeline.shortIdPrefix}-1`;
    record.metadata = metadata;
    record.pipeline = { id: pipeline.id, name: pipeline.name, blueprint: pipeline.blueprint };
    const [stage] = await pipelines.listStages(ctx.prisma, pipeline.id);
    if (stage) {
      record.stage = stage;
      const status = await pipelines.findFirstStatus(ctx.prisma, stage.id);
      if (status) record.status = status;
    }
  }
  return toItemResponse(record);
}

/** The sample task's assignee (CONTRACT "People"): a made-up user whose id is the task's `assigned_to`. */
const SAMPLE_ASSIGNEE: User = { user_id: "sample_assignee", name: "Sample Assignee", email: "assignee@example.com" };

/**
 * One sample task in the Task format: open, due in a day, linked to no item, created by the requesting key
 * (`apiKeyId`), with every optional field filled so each appears with its type (`assignee` too).
 */
export function sampleTask(apiKeyId: string): Task {
  const now = new Date();
  return toTaskResponse({
    id: SAMPLE_IDS.task,
    title: "Call Jane about the proposal",
    description: "Walk through the pricing and agree on next steps.",
    dueAt: new Date(now.getTime() + 24 * 60 * 60 * 1000),
    priority: "medium",
    taskType: "call",
    assignedTo: SAMPLE_ASSIGNEE.user_id,
    createdBy: apiKeyId,
    itemId: SAMPLE_IDS.item,
    isCompleted: false,
    completedAt: null,
    notes: "Sample notes",
    durationMinutes: 30,
    reminderMinutes: 15,
    createdAt: now,
    updatedAt: now,
  }, SAMPLE_ASSIGNEE);
}

/**
 * One sample note in the Note format (CONTRACT "Notes"): unpinned Markdown on the sample item, version 1, created by
 * the requesting key (`apiKeyId`).
 */
export function sampleNote(apiKeyId: string): Note {
  const now = new Date();
  return toNoteResponse({
    id: SAMPLE_IDS.note,
    itemId: SAMPLE_IDS.item,
    body: "Jane asked for **annual billing**; send the revised quote by Friday.",
    pinned: false,
    createdBy: apiKeyId,
    createdAt: now,
    updatedAt: now,
    version: 1,
  });
}

/** The sample payload of `resource` (the body of GET /v1/ext/webhooks/sample/{resource}). */
export function samplePayload(ctx: AppContext, companyId: string, apiKeyId: string, resource: SampleResource): Promise<Item | Task | Note> {
  if (resource === "items") return sampleItem(ctx, companyId);
  return Promise.resolve(resource === "tasks" ? sampleTask(apiKeyId) : sampleNote(apiKeyId));
}
