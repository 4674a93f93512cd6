/**
 * JSON text with one value left open, for statements that fill a value in on the database side (e.g. the
 * `short_id` the item insert takes from its sequence, db/items.ts `insertItemWithEvent`).
 */
import { randomUUID } from "node:crypto";

/** The JSON text of a value around one open slot: the full text is `before + <JSON of the slot's value> + after`. */
export interface JsonAroundSlot {
  before: string;
  after: string;
}

/**
 * A placeholder string for an open slot: random per process, so no client-supplied text can contain it by chance
 * or on purpose.
 */
export function newSlotPlaceholder(label: string): string {
  return `<${label}:${randomUUID()}>`;
}

/**
 * Serialises `value` (with `JSON.stringify`, so key order is kept) and splits the text around the one string
 * property whose value is `placeholder`.
 * @throws Error when the placeholder's JSON does not occur exactly once in the text (a programming error).
 */
export function jsonAroundSlot(value: unknown, placeholder: string): JsonAroundSlot {
  const text = JSON.stringify(value);
  const marker = JSON.stringify(placeholder);
  const at = text.indexOf(marker);
  if (at < 0 || text.includes(marker, at + marker.length)) {
    throw new Error(`jsonAroundSlot: the placeholder must occur exactly once in the value`);
  }
  return { before: text.slice(0, at), after: text.slice(at + marker.length) };
}
