import { z } from "zod";
import {
  AT_LEAST_ONE_FIELD_MESSAGE,
  booleanField,
  dateTimeField,
  enumField,
  hasAnyField,
  idField,
  longTextField,
  strictBody,
  textField,
  wholeNumberField,
} from "./fields";
import { CursorSchema, LimitSchema } from "./pagination";
import { queryParam, queryParams } from "./query-params";
import { UserSchema } from "./users";

/** Spec "Task (response)": allowed values of `priority`. */
export const TASK_PRIORITIES = ["none", "low", "medium", "high", "urgent"] as const;
/** A task priority. */
export type TaskPriority = (typeof TASK_PRIORITIES)[number];

/** Spec "Task (response)": allowed values of `task_type`. */
export const TASK_TYPES = ["to_do", "call", "email", "meeting", "follow_up"] as const;
/** A task type. */
export type TaskType = (typeof TASK_TYPES)[number];

const timestamp = z.iso.datetime({ offset: true });

/**
 * Spec "Task (response)" + CONTRACT "Responses" (`duration_minutes`, `reminder_minutes` returned, number or null;
 * `created_by` is the id of the creating API key) and "Tasks" (`completed_at` follows `is_completed`), and "People":
 * `assignee` is the company's console user whose `user_id` equals `assigned_to`, else null.
 * The body of GET /tasks (array), GET /tasks/{task_id}, create (201), update (200) and task event payloads.
 */
export const TaskSchema = z.object({
  task_id: z.string(),
  title: z.string(),
  description: z.string().nullable(),
  due_at: timestamp,
  priority: z.enum(TASK_PRIORITIES),
  is_completed: z.boolean(),
  task_type: z.enum(TASK_TYPES),
  assigned_to: z.string(),
  assignee: UserSchema.nullable(),
  created_by: z.string(),
  item_id: z.string().nullable(),
  completed_at: timestamp.nullable(),
  notes: z.string().nullable(),
  duration_minutes: z.number().int().nullable(),
  reminder_minutes: z.number().int().nullable(),
  created_at: timestamp,
  updated_at: timestamp,
});
/** A task as returned by the API. */
export type Task = z.infer<typeof TaskSchema>;

/** The optional task write fields (spec "Task write fields"), shared by create and update. */
const optionalTaskFields = {
  description: longTextField("description").nullable().optional(),
  priority: enumField("priority", TASK_PRIORITIES).optional(),
  task_type: enumField("task_type", TASK_TYPES).optional(),
  item_id: idField("item_id").nullable().optional(),
  duration_minutes: wholeNumberField("duration_minutes", 0).nullable().optional(),
  reminder_minutes: wholeNumberField("reminder_minutes", 0).nullable().optional(),
  notes: longTextField("notes").nullable().optional(),
  is_completed: booleanField("is_completed").optional(),
};

/**
 * Spec "Task write fields" + CONTRACT "Scopes and limits" (title and assigned_to 1..255; description and notes
 * up to 10,000) and "Tasks" (`item_id` must name an item of the company: 422). Body of POST /v1/ext/tasks;
 * unknown top-level fields are a 400.
 */
export const TaskCreateSchema = strictBody({
  title: textField("title"),
  due_at: dateTimeField("due_at"),
  assigned_to: idField("assigned_to"),
  ...optionalTaskFields,
});
/** Body of POST /v1/ext/tasks. */
export type TaskCreate = z.infer<typeof TaskCreateSchema>;

/**
 * Spec "Tasks" (PATCH carries any of the write fields) + CONTRACT "Tasks" (`is_completed: true` sets
 * `completed_at`, `false` clears it). Body of PATCH /v1/ext/tasks/{task_id}; at least one field; unknown fields are a 400.
 */
export const TaskUpdateSchema = strictBody({
  title: textField("title").optional(),
  due_at: dateTimeField("due_at").optional(),
  assigned_to: idField("assigned_to").optional(),
  ...optionalTaskFields,
})
  .refine(hasAnyField, { error: AT_LEAST_ONE_FIELD_MESSAGE })
  // CONTRACT "HTTP semantics": the document states the rule (`{}` is a 400).
  .meta({ minProperties: 1 });
/** Body of PATCH /v1/ext/tasks/{task_id}. */
export type TaskUpdate = z.infer<typeof TaskUpdateSchema>;

/**
 * CONTRACT "Lists": the filters of GET /v1/ext/tasks as plain fields, `item_id`, `assigned_to`, `due_before`, `due_after`
 * (besides `is_completed`, a boolean whose query form is "true"/"false"). Unknown parameters are ignored; empty values count as absent.
 */
export const taskListFilters = {
  item_id: idField("item_id").optional(),
  assigned_to: idField("assigned_to").optional(),
  due_before: dateTimeField("due_before").optional(),
  due_after: dateTimeField("due_after").optional(),
};

/** The tasks list query: `taskListFilters` and `is_completed` ("true"/"false") as query parameters, `limit`, `cursor`. */
export const TaskListQuerySchema = z.object({
  item_id: queryParam(taskListFilters.item_id),
  is_completed: queryParam(
    z
      .enum(["true", "false"], { error: 'is_completed must be "true" or "false".' })
      .transform((v) => v === "true")
      .optional(),
  ),
  ...queryParams({ assigned_to: taskListFilters.assigned_to, due_before: taskListFilters.due_before, due_after: taskListFilters.due_after }),
  limit: LimitSchema,
  cursor: CursorSchema,
});
/** Parsed query of GET /v1/ext/tasks. */
export type TaskListQuery = z.infer<typeof TaskListQuerySchema>;

/**
 * CONTRACT "Previous values in update events": the task fields that `changed_fields` of `task.updated` and
 * `task.completed` can name (and a `task.updated` subscription filter's `fields` can list). `completed_at` changes with
 * `is_completed`.
 */
export const TASK_CHANGE_FIELDS = [
  "title",
  "description",
  "due_at",
  "priority",
  "is_completed",
  "completed_at",
  "task_type",
  "assigned_to",
  "item_id",
  "notes",
  "duration_minutes",
  "reminder_minutes",
] as const;
/** A task field name of `changed_fields`. */
export type TaskChangeField = (typeof TASK_CHANGE_FIELDS)[number];
