/**
 * GET /docs (CONTRACT "Reference"): a browsable reference of GET /v1/ext/openapi.json, rendered by Swagger UI whose
 * assets are served from node_modules (swagger-ui-dist) under /docs/assets, so the page needs no other host.
 * The page runs no inline script (its start-up script is /docs/assets/init.js) and carries its own
 * Content-Security-Policy that allows only this origin (plus inline styles and data: images, which Swagger UI uses).
 */
import path from "node:path";
import { Router } from "express";
import { API_BASE_PATH } from "@stageline/shared";

/** The Content-Security-Policy of /docs and its assets. */
export const DOCS_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; " +
  "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Stageline external API reference</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/init.js"></script>
</body>
</html>
`;

/** Starts Swagger UI on the document; no validator badge (it would call another host). */
const INIT_SCRIPT = `window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: ${JSON.stringify(`${API_BASE_PATH}/openapi.json`)},
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout"
  });
});
`;

/** The swagger-ui-dist files the page loads. */
const ASSETS = ["swagger-ui.css", "swagger-ui-bundle.js"] as const;

/** GET /docs, GET /docs/assets/{swagger-ui.css, swagger-ui-bundle.js, init.js} (mounted at the app root). */
export function docsRouter(): Router {
  const router = Router();
  const dist = path.dirname(require.resolve("swagger-ui-dist/package.json"));
  router.use("/docs", (_req, res, next) => {
    res.set("Content-Security-Policy", DOCS_CSP).set("X-Content-Type-Options", "nosniff");
    next();
  });
  router.get("/docs", (_req, res) => {
    res.type("html").send(PAGE);
  });
  router.get("/docs/assets/init.js", (_req, res) => {
    res.type("text/javascript").send(INIT_SCRIPT);
  });
  for (const file of ASSETS) {
    router.get(`/docs/assets/${file}`, (_req, res, next) => {
      res.sendFile(path.join(dist, file), { maxAge: "1d" }, (err) => err && next(err));
    });
  }
  return router;
}
