/**
 * The item page (`/console/pipelines/:id/items/:itemId`): the item, its custom fields, its tasks, its notes
 * (pinned first, then the others, newest first, a keyset page each; issue 30 item 5) and its Activity (its events,
 * newest first, a page at a time: services/item-activity.ts; issue 40 item 5). Rendered by the item GET
 * (pages/pipelines.ts) and again, with the form's errors, by a note form that failed (pages/notes.ts).
 *
 * Note bodies are rendered here with console/note-markdown.ts (sanitized Markdown, raw HTML off): the view prints
 * that HTML as it is, and nothing else unescaped.
 */
import type { Request, Response } from "express";
import type { AppContext } from "../../context";
import { listItemActivity } from "../../services/item-activity";
import { listItemNotes, type ItemNote } from "../../services/item-notes";
import { describeItem } from "../../services/pipeline-views";
import type { FieldError } from "../forms";
import { renderNoteBody } from "../note-markdown";
import { signedIn } from "../request";
import { renderPage } from "../views";

/** A note as the views show it: the stored note with its body rendered to safe HTML. */
export type NoteView = ItemNote & { html: string };

/** Adds the rendered body to a note (console/note-markdown.ts). */
export function noteView(note: ItemNote): NoteView {
  return { ...note, html: renderNoteBody(note.body) };
}

const query = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);

/**
 * Renders the item page of `req`'s `:id` / `:itemId` with HTTP `status`; `form` re-fills the Add note form (its
 * `errors` and typed `values`) after a refused POST. The query's `notes` / `pinned_notes` cursors page the notes,
 * `activity` the Activity.
 * @throws DomainError 404 `not_found` for an item of another company or pipeline; 400 for a cursor not issued here.
 */
export async function renderItemPage(
  ctx: AppContext,
  req: Request,
  res: Response,
  form: { errors?: FieldError[]; values?: { body?: string; pinned?: boolean } } = {},
  status = 200,
): Promise<void> {
  const companyId = signedIn(req).company.id;
  const pipelineId = String(req.params.id);
  const overview = await describeItem(ctx, companyId, pipelineId, String(req.params.itemId));
  const position = { cursor: query(req.query.notes), pinnedCursor: query(req.query.pinned_notes) };
  const notes = await listItemNotes(ctx, companyId, overview.item.item_id, position);
  const activityCursor = query(req.query.activity);
  const activity = await listItemActivity(ctx, companyId, overview.item.item_id, overview.fields, activityCursor);
  renderPage(
    req,
    res,
    "pipelines/item",
    {
      title: `${overview.item.short_id}: ${overview.item.name}`,
      pipelineId,
      ...overview,
      pinnedNotes: { items: notes.pinned.items.map(noteView), next: notes.pinned.next },
      otherNotes: { items: notes.others.items.map(noteView), next: notes.others.next },
      laterNotesPage: Boolean(position.cursor || position.pinnedCursor),
      activity,
      laterActivityPage: activityCursor !== undefined,
      errors: form.errors ?? [],
      values: form.values ?? {},
    },
    status,
  );
}
