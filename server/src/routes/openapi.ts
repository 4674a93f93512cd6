/**
 * GET /v1/ext/openapi.json (CONTRACT "Reference"): the OpenAPI 3.1 document of the external API, generated from the
 * zod contract (server/src/openapi/document.ts). Needs no key and is not rate-limited per key: app.ts mounts this
 * router before the key lookup and the limiter.
 */
import { Router } from "express";
import { openApiJson } from "../openapi/document";

/** GET /openapi.json (mounted under /v1/ext). */
export function openApiRouter(): Router {
  const router = Router();
  router.get("/openapi.json", (_req, res) => {
    res.type("application/json").set("Cache-Control", "public, max-age=300").send(openApiJson());
  });
  return router;
}
