/**
 * Task endpoints under /v1/ext (spec "Tasks"; CONTRACT.md "Responses", "Lists", "Tasks"): reads need `tasks:read`,
 * writes `tasks:write`. Thin: parse with the contract schema, call services/tasks, shape the response.
 */
import { Router } from "express";
import { parseInput, resourceLocation, TaskCreateSchema, TaskListQuerySchema, TaskUpdateSchema, type Task } from "@stageline/shared";
import type { AppContext } from "../context";
import { authOf, requireScope } from "../http/auth";
import { idempotentCreate } from "../http/idempotency";
import { pageWithLink } from "../http/next-page-link";
import { createTask, getTask, listTasks, updateTask } from "../services/tasks";

/** Path parameters of /tasks/:task_id. */
type TaskPath = { task_id: string };

/**
 * GET /tasks, GET /tasks/:task_id, POST /tasks (201 + Location; takes an `Idempotency-Key`, CONTRACT "Idempotency"),
 * PATCH /tasks/:task_id (200).
 */
export function tasksRouter(ctx: AppContext): Router {
  const router = Router();

  router.get("/tasks", requireScope("tasks:read"), async (req, res) => {
    const query = parseInput(TaskListQuerySchema, req.query, "query string");
    const rows = await listTasks(ctx, authOf(req).company.id, query);
    const body: Task[] = pageWithLink(req, res, rows, query.limit).map((row) => row.task);
    res.json(body);
  });

  router.get<TaskPath>("/tasks/:task_id", requireScope("tasks:read"), async (req, res) => {
    const body: Task = await getTask(ctx, authOf(req).company.id, req.params.task_id);
    res.json(body);
  });

  router.post(
    "/tasks",
    requireScope("tasks:write"),
    idempotentCreate(ctx, async (req, claim) => {
      const input = parseInput(TaskCreateSchema, req.body);
      const auth = authOf(req);
      const body: Task = await createTask(ctx, auth.company.id, auth.keyId, input, claim);
      return { status: 201, body, location: resourceLocation("tasks", body.task_id) };
    }),
  );

  router.patch<TaskPath>("/tasks/:task_id", requireScope("tasks:write"), async (req, res) => {
    const input = parseInput(TaskUpdateSchema, req.body);
    const body: Task = await updateTask(ctx, authOf(req).company.id, req.params.task_id, input);
    res.json(body);
  });

  return router;
}
