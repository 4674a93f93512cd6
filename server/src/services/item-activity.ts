/**
 * An item's Activity (issue 40 item 5, CONTRACT "Console: events, activity and charts"): what happened to the item,
 * newest first, from its retained outbox events (its own, its tasks' and its notes'; db/item-activity.ts): what
 * changed (previous and new values: stage and status by name, custom fields by their blueprint label, task and note
 * fields by name) and who did it (an API key or OAuth app by name, a console user by email, else "unknown").
 *
 * The values come from the event bodies (CONTRACT "Previous values in update events": `changed_fields` and
 * `previous`; the new value is the body's own field). An erased body (CONTRACT "Item deletion and erasure") shows only
 * that it was erased. Timestamps are returned as Dates for the console's one date format (console/dates.ts).
 */
import { TASK_CHANGE_FIELDS, type TaskChangeField } from "@stageline/shared";
import type { AppContext } from "../context";
import type { EventActor } from "../db/event-actor";
import * as activity from "../db/item-activity";
import { domainError } from "./errors";

/** Events one Activity page shows. */
export const ACTIVITY_PAGE_SIZE = 20;

/** Characters of a note body (or another long text) an entry shows; the rest is cut with an ellipsis. */
export const ACTIVITY_TEXT_CHARS = 280;

/** A value as the Activity shows it: text, a point in time (shown in the console's date format), or not set (null). */
export type ActivityValue = string | { time: Date } | null;

/** One changed field of an entry. */
export interface ActivityChange {
  /** The field's name as people read it: "Stage", a custom field's label, "Due"... */
  label: string;
  before: ActivityValue;
  after: ActivityValue;
}

/** One event of the Activity. */
export interface ActivityEntry {
  /** The event's id (also the next page's cursor when it is the last of a page). */
  id: string;
  /** The event name, e.g. `item.updated`. */
  event: string;
  /** When it was written. */
  at: Date;
  /** What happened, e.g. `Task "Call back" completed`. */
  summary: string;
  /** Who did it: `API key "Zapier"`, `OAuth app "Acme"`, a console user's email, or `unknown` (not recorded). */
  actor: string;
  /** The event's body was erased (only its name, time and actor are left). */
  erased: boolean;
  /** The changed fields (update events), or what was set (a new note's text); empty otherwise. */
  changes: ActivityChange[];
}

/** One page of an item's Activity. */
export interface ActivityPage {
  entries: ActivityEntry[];
  /** The cursor of the next (older) page, or null when this is the last. */
  next: string | null;
}

/** A custom field of the item's pipeline, as the blueprint defines it. */
export interface ActivityField {
  key: string;
  label: string;
  type: string;
}

const ITEM_FIELD_LABELS: Record<string, string> = {
  name: "Name",
  stage: "Stage",
  status: "Status",
  contact_id: "Contact ID",
  source: "Source",
};

const TASK_FIELD_LABELS: Record<TaskChangeField, string> = {
  title: "Title",
  description: "Description",
  due_at: "Due",
  priority: "Priority",
  is_completed: "Done",
  completed_at: "Completed",
  task_type: "Type",
  assigned_to: "Assigned to",
  item_id: "Item",
  notes: "Notes",
  duration_minutes: "Duration (minutes)",
  reminder_minutes: "Reminder (minutes before)",
};

const TASK_TIME_FIELDS: ReadonlySet<string> = new Set(["due_at", "completed_at"]);

const NOTE_FIELD_LABELS: Record<string, string> = { body: "Text", pinned: "Pinned" };

/** Entry phrases of events whose body was erased, or that have nothing more to say. */
const EVENT_PHRASES: Record<string, string> = {
  "item.created": "Item created",
  "item.updated": "Item changed",
  "item.stage_changed": "Stage changed",
  "item.deleted": "Item deleted",
  "task.created": "Task created",
  "task.updated": "Task changed",
  "task.completed": "Task completed",
  "note.created": "Note added",
  "note.updated": "Note changed",
  "note.deleted": "Note deleted",
};

const CURSOR_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * One page of company `companyId`'s item `itemId`'s Activity, newest first (ACTIVITY_PAGE_SIZE entries), from
 * `cursor` (the `next` of the previous page; undefined: the newest). `fields` are the pipeline's custom fields (their
 * labels name the changes). The caller has already read the item within the company (services/pipeline-views.ts
 * `describeItem`: another company's item is 404 there); every read here is scoped to the company and the item too.
 * @throws DomainError 400 `validation_failed` for a cursor this page did not issue, or one whose event is no longer
 * stored (the retention purge removed it).
 */
export async function listItemActivity(
  ctx: AppContext,
  companyId: string,
  itemId: string,
  fields: readonly ActivityField[],
  cursor?: string,
): Promise<ActivityPage> {
  let before: bigint | null = null;
  if (cursor !== undefined) {
    before = CURSOR_PATTERN.test(cursor) ? await activity.activityEventSeq(ctx.prisma, companyId, itemId, cursor) : null;
    if (before === null) {
      throw domainError("validation_failed", "This Activity page is not available any more: start again from the newest.", {
        errors: [{ path: "activity", message: "Unknown Activity position." }],
      });
    }
  }
  const { rows, more } = await activity.readItemActivity(ctx.prisma, companyId, itemId, before, ACTIVITY_PAGE_SIZE);
  const labels = new Map(fields.map((f) => [f.key, f]));
  const entries = rows.map((row) => toEntry(row, labels));
  return { entries, next: more && entries.length > 0 ? entries[entries.length - 1]!.id : null };
}

/** How the Activity names an actor; `unknown` when none was recorded. */
export function actorLabel(actor: EventActor | null): string {
  if (!actor) return "unknown";
  if (actor.type === "api_key") return `API key "${actor.label}"`;
  if (actor.type === "oauth_app") return `OAuth app "${actor.label}"`;
  return actor.label;
}

type Body = Record<string, unknown>;

/** An event row as an entry. */
function toEntry(row: activity.ActivityEventRow, fields: ReadonlyMap<string, ActivityField>): ActivityEntry {
  const body: Body = row.payload && typeof row.payload === "object" ? (row.payload as Body) : {};
  const erased = row.erasedAt !== null || body.erased === true;
  const base = { id: row.id, event: row.type, at: row.createdAt, actor: actorLabel(row.actor), erased };
  const phrase = EVENT_PHRASES[row.type] ?? row.type;
  if (erased) return { ...base, summary: phrase, changes: [] };
  if (row.type.startsWith("item.")) return { ...base, ...itemEntry(row.type, body, fields, phrase) };
  if (row.type.startsWith("task.")) return { ...base, ...taskEntry(row.type, body) };
  if (row.type.startsWith("note.")) return { ...base, ...noteEntry(row.type, body, phrase) };
  return { ...base, summary: phrase, changes: [] };
}

/** An item event's summary and changes (new values from the body itself: the item after the change). */
function itemEntry(type: string, body: Body, fields: ReadonlyMap<string, ActivityField>, phrase: string): Pick<ActivityEntry, "summary" | "changes"> {
  if (type === "item.created") {
    return { summary: `Item created in stage "${text(body.stage)}", status "${text(body.status)}"`, changes: [] };
  }
  const { changed, previous } = changeSet(body);
  const changes = changed.map((field) => {
    const custom = fields.get(field);
    const isTime = custom?.type === "datetime";
    return {
      label: ITEM_FIELD_LABELS[field] ?? custom?.label ?? field,
      before: value(previous[field], isTime),
      after: value(body[field], isTime),
    };
  });
  return { summary: phrase, changes };
}

/** A task event's summary (named by the task's title) and changes, in TASK_CHANGE_FIELDS order. */
function taskEntry(type: string, body: Body): Pick<ActivityEntry, "summary" | "changes"> {
  const title = `Task "${text(body.title)}"`;
  if (type === "task.created") return { summary: `${title} created`, changes: [] };
  const { changed, previous } = changeSet(body);
  const changes = TASK_CHANGE_FIELDS.filter((f) => changed.includes(f)).map((field) => ({
    label: TASK_FIELD_LABELS[field],
    before: value(previous[field], TASK_TIME_FIELDS.has(field)),
    after: value(body[field], TASK_TIME_FIELDS.has(field)),
  }));
  // `task.completed` is not read (db/item-activity.ts): the `task.updated` written with it tells the same change.
  const completed = changed.includes("is_completed") && body.is_completed === true;
  return { summary: `${title} ${completed ? "completed" : "changed"}`, changes };
}

/** A note event's summary and changes (a new note: its text; a changed one: text and pinned, before and after). */
function noteEntry(type: string, body: Body, phrase: string): Pick<ActivityEntry, "summary" | "changes"> {
  if (type === "note.created") return { summary: phrase, changes: [{ label: NOTE_FIELD_LABELS.body!, before: null, after: value(body.body, false) }] };
  if (type !== "note.updated") return { summary: phrase, changes: [] };
  const { changed, previous } = changeSet(body);
  const changes = changed.map((field) => ({ label: NOTE_FIELD_LABELS[field] ?? field, before: value(previous[field], false), after: value(body[field], false) }));
  return { summary: phrase, changes };
}

/** An update event body's `changed_fields` (names) and `previous` (CONTRACT "Previous values in update events"). */
function changeSet(body: Body): { changed: string[]; previous: Body } {
  const changed = Array.isArray(body.changed_fields) ? body.changed_fields.filter((f): f is string => typeof f === "string") : [];
  const previous = body.previous && typeof body.previous === "object" ? (body.previous as Body) : {};
  return { changed, previous };
}

/** A stored value as shown: null and absent are not set; booleans Yes/No; times as Dates; long text cut. */
function value(v: unknown, isTime: boolean): ActivityValue {
  if (v === undefined || v === null || v === "") return null;
  if (isTime && typeof v === "string" && !Number.isNaN(Date.parse(v))) return { time: new Date(v) };
  if (typeof v === "boolean") return v ? "Yes" : "No";
  return text(v);
}

/** A value as text, cut to ACTIVITY_TEXT_CHARS. */
function text(v: unknown): string {
  const s = typeof v === "string" ? v : v === undefined || v === null ? "" : typeof v === "object" ? JSON.stringify(v) : String(v);
  return s.length > ACTIVITY_TEXT_CHARS ? `${s.slice(0, ACTIVITY_TEXT_CHARS)}…` : s;
}
