/**
 * Note endpoints under /v1/ext (CONTRACT "Notes"): reads need `items:read`, writes `items:write` (a note is part of
 * an item's record). Thin: parse with the contract schema, call services/notes, shape the response.
 */
import { Router } from "express";
import {
  NoteCreateSchema,
  NoteDeleteQuerySchema,
  NoteListQuerySchema,
  NoteUpdateSchema,
  parseInput,
  resourceLocation,
  type Note,
} from "@stageline/shared";
import type { AppContext } from "../context";
import { authOf, requireScope } from "../http/auth";
import { idempotentCreate } from "../http/idempotency";
import { rejectBody } from "../http/no-body";
import { pageWithLink } from "../http/next-page-link";
import { toNoteResponse } from "../services/note-format";
import { createNote, deleteNote, getNote, listNotes, updateNote } from "../services/notes";

/** Path parameters of /notes/:note_id. */
type NotePath = { note_id: string };

/**
 * GET /notes, GET /notes/:note_id, POST /notes (201 + Location; takes an `Idempotency-Key`, CONTRACT
 * "Idempotency"), PATCH /notes/:note_id (200), DELETE /notes/:note_id (204, optional `?version=`).
 */
export function notesRouter(ctx: AppContext): Router {
  const router = Router();

  router.get("/notes", requireScope("items:read"), async (req, res) => {
    const query = parseInput(NoteListQuerySchema, req.query, "query string");
    const rows = await listNotes(ctx, authOf(req).company.id, query);
    const body: Note[] = pageWithLink(req, res, rows, query.limit).map(toNoteResponse);
    res.json(body);
  });

  router.get<NotePath>("/notes/:note_id", requireScope("items:read"), async (req, res) => {
    const body: Note = await getNote(ctx, authOf(req).company.id, req.params.note_id);
    res.json(body);
  });

  router.post(
    "/notes",
    requireScope("items:write"),
    idempotentCreate(ctx, async (req, claim) => {
      const input = parseInput(NoteCreateSchema, req.body);
      const auth = authOf(req);
      const body: Note = await createNote(ctx, auth.company.id, auth.keyId, input, claim);
      return { status: 201, body, location: resourceLocation("notes", body.note_id) };
    }),
  );

  router.patch<NotePath>("/notes/:note_id", requireScope("items:write"), async (req, res) => {
    const input = parseInput(NoteUpdateSchema, req.body);
    const body: Note = await updateNote(ctx, authOf(req).company.id, req.params.note_id, input);
    res.json(body);
  });

  router.delete<NotePath>("/notes/:note_id", requireScope("items:write"), async (req, res) => {
    rejectBody(req);
    const query = parseInput(NoteDeleteQuerySchema, req.query, "query");
    await deleteNote(ctx, authOf(req).company.id, req.params.note_id, query.version);
    res.status(204).end();
  });

  return router;
}
