/**
 * The items toolset (spec "Items"; CONTRACT "MCP server"): list_items, get_item, create_item, update_item,
 * check_duplicates, and the sync tools delete_item (CONTRACT "Item deletion and erasure") and upsert_item (CONTRACT
 * "Upsert"). Arguments and results are the contract's schemas (`@stageline/shared`).
 */
import { z } from "zod";
import {
  DuplicateCheckSchema,
  DuplicateMatchSchema,
  ItemCreateSchema,
  ItemSchema,
  ItemUpdateSchema,
  ItemUpsertSchema,
  UPSERT_RESULTS,
  idField,
  itemListFilters,
  type Item,
} from "@stageline/shared";
import { READ, defineTool } from "../tool-definition";
import { IDEMPOTENCY_ADVICE, idempotencyKeyArg } from "./idempotency";
import { countLine, fieldsArg, nextCursor, pagingArgs, project } from "./paging";

/** "SALES-1 "Acme deal" (Sales / Lead / Open, version 2)". */
export function describeItem(item: Partial<Item>): string {
  const place = [item.pipeline, item.stage, item.status].filter(Boolean).join(" / ");
  return `${item.short_id ?? item.item_id} "${item.name ?? ""}"${place ? ` (${place}${item.version ? `, version ${item.version}` : ""})` : ""}`;
}

const itemIdArg = { item_id: idField("item_id") };

/**
 * What the item tools say of `metadata`: fewer tokens than the API document's sentence (whose U+0000 rule is the whole
 * API's, see tool-schema.ts). The schemas stay the contract's own (same validation).
 */
const METADATA_DESCRIPTION = "Custom field values by key (see describe_pipelines).";
const metadataArg = { metadata: ItemCreateSchema.shape.metadata.describe(METADATA_DESCRIPTION) };

export const listItems = defineTool({
  name: "list_items",
  title: "List items",
  description:
    "Find items (deals, candidates, tickets), newest first. name: exact; q: name contains; short_id e.g. SALES-12.",
  toolset: "items",
  scope: "items:read",
  operations: ["listItems"],
  annotations: READ,
  input: z.strictObject({ ...itemListFilters, ...pagingArgs, fields: fieldsArg('["name","stage"]') }),
  output: z.object({ items: z.array(ItemSchema.partial().required({ item_id: true })), next_cursor: nextCursor }),
  async run(ops, { fields, ...request }) {
    const page = await ops.listItems(request);
    return { items: page.data.map((item) => project(item, "item_id", fields)) as Item[], next_cursor: page.next_cursor };
  },
  summary: (r) => countLine(r.items.length, "item", r.next_cursor),
});

export const getItem = defineTool({
  name: "get_item",
  title: "Get an item",
  description: "Read one item by item_id (custom fields, version).",
  toolset: "items",
  scope: "items:read",
  operations: ["getItem"],
  annotations: READ,
  input: z.strictObject(itemIdArg),
  output: ItemSchema,
  run: (ops, { item_id }) => ops.getItem(item_id),
  summary: (item) => `Item ${describeItem(item)}.`,
});

export const createItem = defineTool({
  name: "create_item",
  title: "Create an item",
  description: `Create an item in a pipeline stage (ids from describe_pipelines). Run check_duplicates first, or use upsert_item. ${IDEMPOTENCY_ADVICE}`,
  toolset: "items",
  scope: "items:write",
  operations: ["createItem"],
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  input: ItemCreateSchema.extend({ ...metadataArg, idempotency_key: idempotencyKeyArg }),
  output: ItemSchema,
  run: (ops, { idempotency_key, ...body }) => ops.createItem(body, idempotency_key),
  summary: (item) => `Created item ${describeItem(item)}.`,
});

export const updateItem = defineTool({
  name: "update_item",
  title: "Update an item",
  description:
    "Change an item's fields or move it. Pass version (from get_item) so a concurrent change is refused (version_conflict), not overwritten.",
  toolset: "items",
  scope: "items:write",
  operations: ["updateItem"],
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  input: z.strictObject({ ...itemIdArg, ...ItemUpdateSchema.shape, metadata: ItemUpdateSchema.shape.metadata.describe(METADATA_DESCRIPTION) }),
  output: ItemSchema,
  run: (ops, { item_id, ...body }) => ops.updateItem(item_id, body),
  summary: (item) => `Updated item ${describeItem(item)}.`,
});

export const checkDuplicates = defineTool({
  name: "check_duplicates",
  title: "Check for duplicate items",
  description:
    "Before create_item: a pipeline's items matching a name or custom fields by its duplicate rules, best first.",
  toolset: "items",
  scope: "items:read",
  operations: ["checkDuplicateItems"],
  annotations: READ,
  input: DuplicateCheckSchema.extend(metadataArg),
  output: z.object({ items: z.array(DuplicateMatchSchema) }),
  run: async (ops, body) => ({ items: await ops.checkDuplicates(body) }),
  summary: (r) =>
    r.items.length === 0 ? "No duplicates." : `${countLine(r.items.length, "possible duplicate", null)} Best: ${describeItem(r.items[0]!)}.`,
});

export const deleteItem = defineTool({
  name: "delete_item",
  title: "Delete an item",
  description:
    "Delete an item for good, erasing its data (GDPR erasure); no undo. Only on the user's request, confirmed with them first. Its tasks stay, unlinked. Pass version to refuse a changed item.",
  toolset: "items",
  scope: "items:write",
  operations: ["deleteItem"],
  // Destructive: it erases data for good. Idempotent in MCP's sense ("calling it repeatedly with the same arguments
  // has no additional effect on its environment"), as DELETE is in RFC 9110 §9.2.2: a repeat deletes and erases
  // nothing more, it only answers not_found (ids are never reused, so it can never hit another item). The hint
  // describes effects, not answers: unsubscribe_webhook, also not_found on a repeat, states it the same way, and a
  // client may retry a call whose answer was lost without risk. Confirmation is asked for by destructiveHint.
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  input: z.strictObject({ ...itemIdArg, version: ItemUpdateSchema.shape.version }),
  output: z.object({ item_id: z.string(), deleted: z.literal(true) }),
  run: async (ops, { item_id, version }) => {
    await ops.deleteItem(item_id, version);
    return { item_id, deleted: true as const };
  },
  summary: (r) => `Deleted item ${r.item_id}; its data is erased.`,
});

export const upsertItem = defineTool({
  name: "upsert_item",
  title: "Create or update an item",
  description: `To sync a record: atomically updates the item the pipeline's duplicate rule matches (e.g. same email), else creates it. ambiguous_match: update one of matches; upsert_unavailable (no rule or its fields missing): use create_item. ${IDEMPOTENCY_ADVICE}`,
  toolset: "items",
  scope: "items:write",
  operations: ["upsertItem"],
  // Destructive: a match's fields are overwritten, as update_item does. Idempotent: a repeat with the same arguments
  // finds the item it created or updated and leaves it (unchanged); with the same idempotency_key it replays.
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  input: ItemUpsertSchema.extend({ ...metadataArg, idempotency_key: idempotencyKeyArg }),
  output: z.object({ result: z.enum(UPSERT_RESULTS), item: ItemSchema }),
  run: (ops, { idempotency_key, ...body }) => ops.upsertItem(body, idempotency_key),
  summary: (r) => `${r.result[0]!.toUpperCase()}${r.result.slice(1)} item ${describeItem(r.item)}.`,
});
