import { Router } from "express";
import type { AppContext } from "../context";

/** Routes under /v1/ext for items. */
export function itemsRouter(_ctx: AppContext): Router {
  const router = Router();
  return router;
}
