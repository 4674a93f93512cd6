import { Router } from "express";
import type { AppContext } from "../context";

/** Routes under /v1/ext for webhooks. */
export function webhooksRouter(_ctx: AppContext): Router {
  const router = Router();
  return router;
}
