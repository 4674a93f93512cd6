/**
 * The tasks toolset (spec "Tasks"; CONTRACT "MCP server"): list_tasks, get_task, create_task, update_task,
 * complete_task. Arguments and results are the contract's schemas (`@stageline/shared`).
 */
import { z } from "zod";
import { TaskCreateSchema, TaskSchema, TaskUpdateSchema, booleanField, idField, taskListFilters, type Task } from "@stageline/shared";
import { READ, defineTool } from "../tool-definition";
import { IDEMPOTENCY_ADVICE, idempotencyKeyArg } from "./idempotency";
import { countLine, fieldsArg, nextCursor, pagingArgs, project } from "./paging";

/** `"Call Ada" due 2026-12-01T09:00:00Z (open)`. */
export function describeTask(task: Partial<Task>): string {
  const state = task.is_completed === undefined ? "" : task.is_completed ? " (done)" : " (open)";
  return `"${task.title ?? task.task_id}"${task.due_at ? ` due ${task.due_at}` : ""}${state}`;
}

const taskIdArg = { task_id: idField("task_id") };

export const listTasks = defineTool({
  name: "list_tasks",
  title: "List tasks",
  description:
    "Find tasks (calls, emails, meetings, to-dos), newest first.",
  toolset: "tasks",
  scope: "tasks:read",
  operations: ["listTasks"],
  annotations: READ,
  input: z.strictObject({
    ...taskListFilters,
    is_completed: booleanField("is_completed").optional(),
    ...pagingArgs,
    fields: fieldsArg('["title","due_at"]'),
  }),
  output: z.object({ tasks: z.array(TaskSchema.partial().required({ task_id: true })), next_cursor: nextCursor }),
  async run(ops, { fields, ...request }) {
    const page = await ops.listTasks(request);
    return { tasks: page.data.map((task) => project(task, "task_id", fields)) as Task[], next_cursor: page.next_cursor };
  },
  summary: (r) => countLine(r.tasks.length, "task", r.next_cursor),
});

export const getTask = defineTool({
  name: "get_task",
  title: "Get a task",
  description: "Read one task by task_id (assignee, due, item).",
  toolset: "tasks",
  scope: "tasks:read",
  operations: ["getTask"],
  annotations: READ,
  input: z.strictObject(taskIdArg),
  output: TaskSchema,
  run: (ops, { task_id }) => ops.getTask(task_id),
  summary: (task) => `Task ${describeTask(task)}.`,
});

export const createTask = defineTool({
  name: "create_task",
  title: "Create a task",
  description: `Create a task (call, email, meeting, to-do) for someone (see list_users), optionally on an item. ${IDEMPOTENCY_ADVICE}`,
  toolset: "tasks",
  scope: "tasks:write",
  operations: ["createTask"],
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  input: TaskCreateSchema.extend({ idempotency_key: idempotencyKeyArg }),
  output: TaskSchema,
  run: (ops, { idempotency_key, ...body }) => ops.createTask(body, idempotency_key),
  summary: (task) => `Created task ${describeTask(task)}.`,
});

export const updateTask = defineTool({
  name: "update_task",
  title: "Update a task",
  description: "Change a task's fields, e.g. reassign it (to mark it done: complete_task).",
  toolset: "tasks",
  scope: "tasks:write",
  operations: ["updateTask"],
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  input: z.strictObject({ ...taskIdArg, ...TaskUpdateSchema.shape }),
  output: TaskSchema,
  run: (ops, { task_id, ...body }) => ops.updateTask(task_id, body),
  summary: (task) => `Updated task ${describeTask(task)}.`,
});

export const completeTask = defineTool({
  name: "complete_task",
  title: "Complete a task",
  description: "Mark a task done (sets completed_at). Safe to repeat.",
  toolset: "tasks",
  scope: "tasks:write",
  operations: ["updateTask"],
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  input: z.strictObject(taskIdArg),
  output: TaskSchema,
  run: (ops, { task_id }) => ops.updateTask(task_id, { is_completed: true }),
  summary: (task) => `Completed task ${describeTask(task)}.`,
});
