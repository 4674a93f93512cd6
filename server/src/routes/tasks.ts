import { Router } from "express";
import type { AppContext } from "../context";

/** Routes under /v1/ext for tasks. */
export function tasksRouter(_ctx: AppContext): Router {
  const router = Router();
  return router;
}
