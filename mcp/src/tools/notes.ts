/**
 * The notes toolsets (CONTRACT "Notes"; CONTRACT "MCP server"): `notes` (default) with add_note and list_notes, and
 * `note_edits` (off unless asked for) with update_note and delete_note. Why edits are a toolset of their own: an
 * agent's work around an item is to read the conversation and add to it; rewriting or deleting what a person wrote is
 * rare, changes someone else's words (delete erases the body for good), and each tool listed costs every conversation
 * its tokens (the default toolsets must fit 6,000 o200k tokens). A client that needs them asks for `note_edits`.
 * Arguments and results are the contract's schemas (`@stageline/shared`).
 */
import { z } from "zod";
import { NoteCreateSchema, NoteSchema, NoteUpdateSchema, booleanField, idField, noteListFilters, type Note } from "@stageline/shared";
import { READ, defineTool } from "../tool-definition";
import { IDEMPOTENCY_ADVICE, idempotencyKeyArg } from "./idempotency";
import { countLine, fieldsArg, nextCursor, pagingArgs, project } from "./paging";

/** `note n1 on item i1 (pinned, version 2)`. */
export function describeNote(note: Partial<Note>): string {
  const facts = [note.pinned ? "pinned" : "", note.version ? `version ${note.version}` : ""].filter(Boolean).join(", ");
  return `note ${note.note_id}${note.item_id ? ` on item ${note.item_id}` : ""}${facts ? ` (${facts})` : ""}`;
}

const noteIdArg = { note_id: idField("note_id") };

export const listNotes = defineTool({
  name: "list_notes",
  title: "List notes",
  description: "Read the notes (Markdown) on an item, or all, newest first.",
  toolset: "notes",
  scope: "items:read",
  operations: ["listNotes"],
  annotations: READ,
  input: z.strictObject({ ...noteListFilters, pinned: booleanField("pinned").optional(), ...pagingArgs, fields: fieldsArg('["pinned"]') }),
  output: z.object({ notes: z.array(NoteSchema.partial().required({ note_id: true })), next_cursor: nextCursor }),
  async run(ops, { fields, ...request }) {
    const page = await ops.listNotes(request);
    return { notes: page.data.map((note) => project(note, "note_id", fields)) as Note[], next_cursor: page.next_cursor };
  },
  summary: (r) => countLine(r.notes.length, "note", r.next_cursor),
});

export const addNote = defineTool({
  name: "add_note",
  title: "Add a note",
  description: `Add a Markdown note to an item (e.g. a call summary); pinned keeps it on top. ${IDEMPOTENCY_ADVICE}`,
  toolset: "notes",
  scope: "items:write",
  operations: ["createNote"],
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  input: NoteCreateSchema.extend({ idempotency_key: idempotencyKeyArg }),
  output: NoteSchema,
  run: (ops, { idempotency_key, ...body }) => ops.createNote(body, idempotency_key),
  summary: (note) => `Added ${describeNote(note)}.`,
});

export const updateNote = defineTool({
  name: "update_note",
  title: "Update a note",
  description:
    "Rewrite a note's body or (un)pin it; only on the user's request. Pass version (from list_notes): a concurrent change is then refused (version_conflict), not overwritten.",
  toolset: "note_edits",
  scope: "items:write",
  operations: ["updateNote"],
  // Destructive: the old body is replaced. Idempotent: the same arguments again change nothing more.
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  input: z.strictObject({ ...noteIdArg, ...NoteUpdateSchema.shape }),
  output: NoteSchema,
  run: (ops, { note_id, ...body }) => ops.updateNote(note_id, body),
  summary: (note) => `Updated ${describeNote(note)}.`,
});

export const deleteNote = defineTool({
  name: "delete_note",
  title: "Delete a note",
  description: "Delete a note for good, erasing its body; no undo. Only on the user's request, confirmed with them first. Pass version to refuse a changed note.",
  toolset: "note_edits",
  scope: "items:write",
  operations: ["deleteNote"],
  // As delete_item (items.ts): destructive, and idempotent in MCP's sense (a repeat erases nothing more; not_found).
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  input: z.strictObject({ ...noteIdArg, version: NoteUpdateSchema.shape.version }),
  output: z.object({ note_id: z.string(), deleted: z.literal(true) }),
  run: async (ops, { note_id, version }) => {
    await ops.deleteNote(note_id, version);
    return { note_id, deleted: true as const };
  },
  summary: (r) => `Deleted note ${r.note_id}; its body is erased.`,
});
