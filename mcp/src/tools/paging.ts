/**
 * The paging arguments every list tool takes (CONTRACT "MCP server", "Token economy"): `limit` (default 20, at most
 * 100: a page an agent can read), `cursor` (the previous result's `next_cursor`) and `fields` (which fields of each
 * record to return; the id always comes back), and the projection that applies `fields`.
 */
import { z } from "zod";
import { cursorField } from "@stageline/shared";

/** CONTRACT "MCP server": a list tool's default page size. */
export const DEFAULT_TOOL_LIMIT = 20;
/** CONTRACT "MCP server": a list tool's largest page. */
export const MAX_TOOL_LIMIT = 100;

/**
 * `limit`, `cursor` of a list tool. `cursor` carries no description: every list result has `next_cursor`, the name
 * pairs them, and the API document's sentence about the `Link` header is not the tool's (the tools take the value as
 * it came; each listed word costs every conversation tokens).
 */
export const pagingArgs = {
  limit: z.number().int().min(1).max(MAX_TOOL_LIMIT).default(DEFAULT_TOOL_LIMIT),
  cursor: cursorField.optional().meta({ description: undefined }),
};

/** `fields`: the record fields to return (the id always comes back). */
export function fieldsArg(example: string) {
  return z
    .array(z.string().min(1).max(255))
    .min(1)
    .max(100)
    .optional()
    .describe(`Only these fields, e.g. ${example}.`);
}

/** The list result shape `{ <key>: record[], next_cursor }` (CONTRACT "MCP server", "Results"). */
export const nextCursor = z.string().nullable();

/**
 * `record` reduced to `id` and `fields` (all of it when `fields` is absent).
 * @param idKey the record's id field, always kept.
 */
export function project<T extends Record<string, unknown>>(record: T, idKey: string, fields: readonly string[] | undefined): Partial<T> {
  if (!fields) return record;
  const out: Record<string, unknown> = { [idKey]: record[idKey] };
  for (const f of fields) if (Object.hasOwn(record, f)) out[f] = record[f];
  return out as Partial<T>;
}

/** "12 items (more: next_cursor)" style count for a summary. */
export function countLine(count: number, noun: string, next: string | null): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}${next ? " (more: pass next_cursor)" : ""}.`;
}
