/**
 * Notes on the item page (issue 30 item 5, CONTRACT "Notes"): owners and admins add, edit, pin or unpin, and delete
 * (after a confirmation page) an item's notes; members read them (no controls, and every route here is 403 for them).
 * Every write goes through services/item-notes.ts (the API's notes service, the console user as `created_by`, an audit
 * entry without the body); every form carries the CSRF token; each POST redirects back to the item page.
 *
 * Edit and delete send the version the user saw: a note changed since shows a conflict message with the note as it
 * is now and the user's text kept, never a silent overwrite. Line ends typed in a browser (CRLF) are stored as LF.
 * The flash messages never quote a body (the session stores them until shown, and a deleted body must not outlive it).
 */
import { Router, type Request, type Response } from "express";
import type { AppContext } from "../../context";
import { DomainError } from "../../services/errors";
import { addItemNote, deleteItemNote, editItemNote, getItemNote, pinItemNote, type NoteWriter } from "../../services/item-notes";
import { describeItem, type ItemOverview } from "../../services/pipeline-views";
import { formErrors, type FieldError } from "../forms";
import { notify } from "../flash";
import { renderNoteBody } from "../note-markdown";
import { clientIp, signedIn } from "../request";
import { requireRole } from "../session";
import { renderPage } from "../views";
import { renderItemPage } from "./item-page";

/**
 * The console paths whose forms carry a note body (add, edit): index.ts parses them with NOTE_FORM_MAX_BYTES instead
 * of the console's 64 KiB, so a body of the contract's 65,536 characters fits however it is percent-encoded.
 */
export const NOTE_FORM_PATH = /^\/pipelines\/[^/]+\/items\/[^/]+\/notes(?:\/[^/]+\/edit)?$/;

/**
 * Largest note form body, in bytes: 65,536 characters of at most 9 bytes each once UTF-8 percent-encoded (a
 * three-byte character is `%E2%80%94`), plus the other fields.
 */
export const NOTE_FORM_MAX_BYTES = 9 * 65536 + 4096;

const param = (req: Request, name: string): string => String(req.params[name]);
const itemPath = (req: Request) => `/console/pipelines/${encodeURIComponent(param(req, "id"))}/items/${encodeURIComponent(param(req, "itemId"))}`;
const notePath = (req: Request) => `${itemPath(req)}/notes/${encodeURIComponent(param(req, "noteId"))}`;

/** A textarea's text as typed, with browser line ends (CRLF, or a lone CR) stored as LF. */
function formText(value: unknown): string {
  return typeof value === "string" ? value.replace(/\r\n?/g, "\n") : "";
}

/** The signed-in user writing notes on `overview`'s item (scoped to their company, with their IP for the audit log). */
function writer(req: Request, overview: ItemOverview): NoteWriter {
  const user = signedIn(req);
  return {
    user: { id: user.id, email: user.email },
    companyId: user.company.id,
    ip: clientIp(req),
    item: { id: overview.item.item_id, shortId: overview.item.short_id },
  };
}

/** The item of the URL (`:id`, `:itemId`) within the user's company: 404 for another company's or pipeline's. */
function itemOf(ctx: AppContext, req: Request): Promise<ItemOverview> {
  return describeItem(ctx, signedIn(req).company.id, param(req, "id"), param(req, "itemId"));
}

/** The message shown when a note changed after the user opened it (409 `version_conflict`). */
function conflictError(field: string, doing: string): FieldError {
  return { field, message: `Someone changed this note since you opened it. Check the note as it is now, below, and ${doing} again if you still want to.` };
}

const isConflict = (err: unknown): boolean => err instanceof DomainError && err.code === "version_conflict";

/** The Notes routes, mounted with the Pipelines section after the sign-in guards. */
export function notesRouter(ctx: AppContext): Router {
  const router = Router();
  const admins = requireRole("admin");

  /** The edit or delete page of the URL's note; `form` keeps the user's text and errors after a refused POST. */
  const renderNotePage = async (req: Request, res: Response, kind: "edit" | "delete", form: { errors?: FieldError[]; body?: string } = {}, status = 200) => {
    const overview = await itemOf(ctx, req);
    const note = await getItemNote(ctx, signedIn(req).company.id, overview.item.item_id, param(req, "noteId"));
    const title = kind === "edit" ? `Edit note on ${overview.item.short_id}` : `Delete this note on ${overview.item.short_id}?`;
    renderPage(
      req,
      res,
      `notes/${kind}`,
      { title, itemPath: itemPath(req), notePath: notePath(req), item: overview.item, note, html: renderNoteBody(note.body), body: form.body ?? note.body, errors: form.errors ?? [] },
      status,
    );
  };

  router.post("/pipelines/:id/items/:itemId/notes", admins, async (req, res) => {
    const overview = await itemOf(ctx, req);
    const values = { body: formText(req.body?.body), pinned: req.body?.pinned === "true" };
    try {
      await addItemNote(ctx, writer(req, overview), values);
    } catch (err) {
      const errors = formErrors(err, { body: "note-body" }, "note-body");
      return renderItemPage(ctx, req, res, { errors, values }, 400);
    }
    await notify(ctx.prisma, req, { kind: "success", message: values.pinned ? "Note added and pinned." : "Note added." });
    res.redirect(303, `${itemPath(req)}#notes`);
  });

  router.get("/pipelines/:id/items/:itemId/notes/:noteId/edit", admins, (req, res) => renderNotePage(req, res, "edit"));
  router.post("/pipelines/:id/items/:itemId/notes/:noteId/edit", admins, async (req, res) => {
    const overview = await itemOf(ctx, req);
    const body = formText(req.body?.body);
    let changed: boolean;
    try {
      ({ changed } = await editItemNote(ctx, writer(req, overview), param(req, "noteId"), { body, version: req.body?.version }));
    } catch (err) {
      if (isConflict(err)) return renderNotePage(req, res, "edit", { body, errors: [conflictError("note-body", "save your text")] }, 409);
      const errors = formErrors(err, { body: "note-body" }, "note-body");
      return renderNotePage(req, res, "edit", { body, errors }, 400);
    }
    await notify(ctx.prisma, req, { kind: "success", message: changed ? "Note saved." : "Nothing to save: the note already reads like that." });
    res.redirect(303, `${itemPath(req)}#notes`);
  });

  router.post("/pipelines/:id/items/:itemId/notes/:noteId/pin", admins, async (req, res) => {
    const overview = await itemOf(ctx, req);
    const pinned = req.body?.pinned === "true";
    await pinItemNote(ctx, writer(req, overview), param(req, "noteId"), pinned);
    await notify(ctx.prisma, req, { kind: "success", message: pinned ? "Note pinned: it is shown first." : "Note unpinned." });
    res.redirect(303, `${itemPath(req)}#notes`);
  });

  router.get("/pipelines/:id/items/:itemId/notes/:noteId/delete", admins, (req, res) => renderNotePage(req, res, "delete"));
  router.post("/pipelines/:id/items/:itemId/notes/:noteId/delete", admins, async (req, res) => {
    const overview = await itemOf(ctx, req);
    try {
      await deleteItemNote(ctx, writer(req, overview), param(req, "noteId"), req.body?.version);
    } catch (err) {
      if (isConflict(err)) return renderNotePage(req, res, "delete", { errors: [conflictError("delete-note", "delete it")] }, 409);
      const errors = formErrors(err, {}, "delete-note");
      return renderNotePage(req, res, "delete", { errors }, 400);
    }
    await notify(ctx.prisma, req, { kind: "success", message: `Note deleted from ${overview.item.short_id}.` });
    res.redirect(303, `${itemPath(req)}#notes`);
  });

  return router;
}
