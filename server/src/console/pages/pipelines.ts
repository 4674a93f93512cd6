/**
 * Pipelines and items, read-only (issue 10, "Pipelines, items, audit"): the company's pipelines with stages,
 * statuses, custom fields and duplicate rules; a pipeline's items in keyset pages, searchable by name or short ID;
 * one item with its custom fields, tasks and notes (the note forms: pages/notes.ts). Owners and admins import a pipeline from a blueprint JSON file with
 * the same service as the admin CLI's `pipelines import` (services/pipeline-import.ts), and archive or restore a
 * pipeline after a confirmation page (services/pipeline-archive.ts, as the CLI's `pipelines archive|restore`), and
 * delete an item after a confirmation page (services/item-delete.ts, as the API's DELETE).
 *
 * The import form posts `multipart/form-data`: `blueprintUpload` parses it (multer, in memory, one file of at most
 * 1 MiB) before the console's CSRF check, which then finds the form's `_csrf` field as for any other form.
 */
import { Router, type Request, type RequestHandler } from "express";
import multer from "multer";
import type { AppContext } from "../../context";
import { domainError, type DomainError } from "../../services/errors";
import { archivePipeline, restorePipeline, type PipelineArchiver } from "../../services/pipeline-archive";
import { importPipeline } from "../../services/pipeline-import";
import { deleteItem } from "../../services/item-delete";
import { describeItem, describePipeline, listPipelineItems, listPipelineSummaries } from "../../services/pipeline-views";
import { formErrors } from "../forms";
import { notify } from "../flash";
import { clientIp, signedIn } from "../request";
import { requireRole } from "../session";
import { renderPage } from "../views";
import { renderItemPage } from "./item-page";

/** Largest blueprint file accepted, in bytes. */
export const BLUEPRINT_FILE_MAX_BYTES = 1024 * 1024;

/** Path of the import form's POST, below /console. */
export const IMPORT_PATH = "/pipelines/import";

const upload = multer({
  storage: multer.memoryStorage(),
  limits: { fileSize: BLUEPRINT_FILE_MAX_BYTES, files: 1, fields: 5, parts: 6 },
});

/**
 * Parses the import form (multipart) for signed-in users only, so an anonymous request never costs an upload; a
 * file over the limit is a 413 error page.
 */
export const blueprintUpload: RequestHandler = (req, res, next) => {
  if (!req.consoleSession) return next();
  upload.single("file")(req, res, (err?: unknown) => {
    if ((err as { code?: string } | undefined)?.code === "LIMIT_FILE_SIZE") {
      return next(Object.assign(new Error("blueprint file too large"), { type: "entity.too.large" }));
    }
    next(err);
  });
};

const param = (req: Request, name: string): string => String(req.params[name]);

/** The signed-in user as the archiver of a pipeline (scoped to their company, with their IP for the audit log). */
function archiver(req: Request): PipelineArchiver {
  const user = signedIn(req);
  return { actor: { type: "user", id: user.id, email: user.email }, companyId: user.company.id, ip: clientIp(req) };
}
const query = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);

/** The Pipelines section. */
export function pipelinesRouter(ctx: AppContext): Router {
  const router = Router();

  const renderList = async (req: Parameters<RequestHandler>[0], res: Parameters<RequestHandler>[1], errors: { field: string; message: string }[] = [], status = 200) => {
    const pipelines = await listPipelineSummaries(ctx, signedIn(req).company.id);
    renderPage(req, res, "pipelines/list", { title: "Pipelines", pipelines, errors }, status);
  };

  router.get("/pipelines", (req, res) => renderList(req, res));

  router.post(IMPORT_PATH, requireRole("admin"), async (req, res) => {
    try {
      const file = req.file;
      if (!file || file.size === 0) {
        throw domainError("validation_failed", "Choose a blueprint file.", { errors: [{ path: "file", message: "Choose a blueprint JSON file to import." }] });
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(file.buffer.toString("utf8"));
      } catch (err) {
        throw domainError("validation_failed", "The file is not valid JSON.", {
          errors: [{ path: "file", message: `${file.originalname} is not valid JSON: ${(err as Error).message}.` }],
        });
      }
      const pipeline = await importPipeline(ctx.prisma, signedIn(req).company.id, parsed);
      await notify(ctx.prisma, req, { kind: "success", message: `Pipeline "${pipeline.name}" imported with ${pipeline.stages.length} stages.` });
      res.redirect(303, `/console/pipelines/${encodeURIComponent(pipeline.id)}`);
    } catch (err) {
      // Every problem of the file (its fields, its JSON) is reported on the one file input.
      const errors = formErrors(err, {}, "file").map((e) => ({ field: "file", message: e.message }));
      await renderList(req, res, errors, (err as DomainError).status); // 400, or 422 for a file over the blueprint limits
    }
  });

  router.get("/pipelines/:id", async (req, res) => {
    const pipeline = await describePipeline(ctx, signedIn(req).company.id, param(req, "id"));
    renderPage(req, res, "pipelines/pipeline", { title: `Pipeline ${pipeline.name}`, pipeline });
  });

  // Archive and restore (owners and admins): a confirmation page, then a CSRF-protected POST (services/pipeline-archive.ts).
  for (const action of ["archive", "restore"] as const) {
    router.get(`/pipelines/:id/${action}`, requireRole("admin"), async (req, res) => {
      const pipeline = await describePipeline(ctx, signedIn(req).company.id, param(req, "id"));
      const title = `${action === "archive" ? "Archive" : "Restore"} pipeline "${pipeline.name}"?`;
      renderPage(req, res, "pipelines/archive", { title, action, pipeline });
    });
    router.post(`/pipelines/:id/${action}`, requireRole("admin"), async (req, res) => {
      const change = action === "archive" ? archivePipeline : restorePipeline;
      const state = await change(ctx.prisma, param(req, "id"), archiver(req));
      const message =
        action === "archive"
          ? `Pipeline "${state.name}" archived. It is no longer listed by the API or Zapier, and no item can be created in it; its items stay readable and updatable.`
          : `Pipeline "${state.name}" restored. It is listed again and items can be created in it.`;
      await notify(ctx.prisma, req, { kind: "success", message });
      res.redirect(303, `/console/pipelines/${encodeURIComponent(state.id)}`);
    });
  }

  router.get("/pipelines/:id/items", async (req, res) => {
    const companyId = signedIn(req).company.id;
    const pipeline = await describePipeline(ctx, companyId, param(req, "id"));
    const search = query(req.query.q)?.trim() ?? "";
    const cursor = query(req.query.cursor);
    const page = await listPipelineItems(ctx, companyId, pipeline.id, { search, cursor });
    renderPage(req, res, "pipelines/items", { title: `Items of ${pipeline.name}`, pipeline, items: page.items, next: page.next, search, firstPage: !cursor });
  });

  // The item page, with its notes (pages/item-page.ts; the note forms are in pages/notes.ts).
  router.get("/pipelines/:id/items/:itemId", (req, res) => renderItemPage(ctx, req, res));

  // Delete an item (owners and admins): a confirmation page, then a CSRF-protected POST (services/item-delete.ts,
  // the API's DELETE). The flash message names the short ID only: the session stores it, and the item's values must
  // not outlive it (CONTRACT "Item deletion and erasure").
  router.get("/pipelines/:id/items/:itemId/delete", requireRole("admin"), async (req, res) => {
    const overview = await describeItem(ctx, signedIn(req).company.id, param(req, "id"), param(req, "itemId"));
    const title = `Delete item ${overview.item.short_id}?`;
    renderPage(req, res, "pipelines/item-delete", { title, pipelineId: param(req, "id"), item: overview.item, taskCount: overview.tasks.length });
  });
  router.post("/pipelines/:id/items/:itemId/delete", requireRole("admin"), async (req, res) => {
    const user = signedIn(req);
    const pipelineId = param(req, "id");
    // The item must be one of this pipeline's (the URL's), as on the item page; another company's is 404.
    await describeItem(ctx, user.company.id, pipelineId, param(req, "itemId"));
    const deleted = await deleteItem(ctx, user.company.id, param(req, "itemId"), {
      actor: { type: "user", id: user.id, email: user.email },
      ip: clientIp(req),
    });
    const tasks = deleted.unlinkedTasks === 0 ? "" : ` ${deleted.unlinkedTasks} task${deleted.unlinkedTasks === 1 ? " was" : "s were"} unlinked from it.`;
    await notify(ctx.prisma, req, { kind: "success", message: `Item ${deleted.shortId} deleted.${tasks}` });
    res.redirect(303, `/console/pipelines/${encodeURIComponent(pipelineId)}/items`);
  });

  return router;
}
