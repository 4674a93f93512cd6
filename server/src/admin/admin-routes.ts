// PLACEHOLDER until the admin work lands.
import { Router } from "express";
import type { AppContext } from "../context";
export function adminRouter(_ctx: AppContext): Router {
  return Router();
}
