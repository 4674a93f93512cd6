/**
 * The Item format (spec "Item (response)" + CONTRACT "Responses"): one function turns a stored item into the
 * object every endpoint, event delivery and sample returns, so they can never drift apart.
 */
import { BlueprintSchema, type Blueprint, type Item } from "@stageline/shared";
import type { ItemRecord } from "../db/item-record";
import { toIsoTimestamp } from "./iso-timestamp";

const blueprintCache = new WeakMap<object, Blueprint>();

/** Parses a stored blueprint (JSON column); an empty or invalid one reads as no custom fields. */
export function readBlueprint(stored: unknown): Blueprint {
  if (stored && typeof stored === "object") {
    const cached = blueprintCache.get(stored);
    if (cached) return cached;
    const parsed = BlueprintSchema.safeParse(stored);
    const value = parsed.success ? parsed.data : ({ custom_fields: [] } as unknown as Blueprint);
    blueprintCache.set(stored, value);
    return value;
  }
  return { custom_fields: [] } as unknown as Blueprint;
}

/**
 * Formats an item. Every custom field of the pipeline's blueprint is present at the top level (null when unset),
 * so live payloads, samples and Zapier output fields share one shape.
 */
export function toItemResponse(row: ItemRecord): Item {
  const metadata = (row.metadata ?? {}) as Record<string, unknown>;
  // Built key by key (no object spread: this runs for every item of every page). Same keys, order and values as
  // `{ item_id, ..., source, ...custom, created_at, updated_at, version }`: assigning a key that already exists
  // keeps its position and takes the new value, exactly as the spread did.
  const item: Record<string, unknown> = {
    item_id: row.id,
    short_id: row.shortId,
    name: row.name,
    pipeline: row.pipeline.name,
    pipeline_id: row.pipeline.id,
    stage: row.stage.name,
    stage_id: row.stage.id,
    status: row.status.name,
    status_id: row.status.id,
    contact_id: row.contactId,
    source: row.source,
  };
  for (const field of readBlueprint(row.pipeline.blueprint).custom_fields ?? []) {
    item[field.key] = metadata[field.key] ?? null;
  }
  item.created_at = toIsoTimestamp(row.createdAt);
  item.updated_at = toIsoTimestamp(row.updatedAt);
  item.version = row.version;
  return item as Item;
}
