/**
 * The items toolset (spec "Items"; CONTRACT "MCP server"): list_items, get_item, create_item, update_item,
 * check_duplicates. Arguments and results are the contract's schemas (`@stageline/shared`).
 */
import { z } from "zod";
import {
  DuplicateCheckSchema,
  DuplicateMatchSchema,
  ItemCreateSchema,
  ItemSchema,
  ItemUpdateSchema,
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

const itemIdArg = { item_id: idField("item_id").describe("The item's item_id.") };

export const listItems = defineTool({
  name: "list_items",
  title: "List items",
  description:
    "Find pipeline items (deals, candidates, tickets), newest first. Filter by pipeline_id, stage_id, status_id, short_id (e.g. SALES-12), exact name, q (name contains), created_after/updated_after (ISO 8601). Use fields to get only what you need; page with next_cursor.",
  toolset: "items",
  scope: "items:read",
  operations: ["listItems"],
  annotations: READ,
  input: z.strictObject({ ...itemListFilters, ...pagingArgs, fields: fieldsArg('["name","stage","version"]') }),
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
  description: "Read one item by item_id: its pipeline, stage, status, custom fields and current version (needed for update_item).",
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
  description: `Create an item in a pipeline stage (ids from describe_pipelines; custom field values in metadata, keyed by field key). Consider check_duplicates first. ${IDEMPOTENCY_ADVICE}`,
  toolset: "items",
  scope: "items:write",
  operations: ["createItem"],
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  input: ItemCreateSchema.extend({ idempotency_key: idempotencyKeyArg }),
  output: ItemSchema,
  run: (ops, { idempotency_key, ...body }) => ops.createItem(body, idempotency_key),
  summary: (item) => `Created item ${describeItem(item)}.`,
});

export const updateItem = defineTool({
  name: "update_item",
  title: "Update an item",
  description:
    "Change an item's name, stage, status, contact, source or custom fields (metadata). Pass version (from get_item) so a concurrent change is refused (version_conflict with current_version) instead of overwritten; repeating the same update is then harmless.",
  toolset: "items",
  scope: "items:write",
  operations: ["updateItem"],
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  input: z.strictObject({ ...itemIdArg, ...ItemUpdateSchema.shape }),
  output: ItemSchema,
  run: (ops, { item_id, ...body }) => ops.updateItem(item_id, body),
  summary: (item) => `Updated item ${describeItem(item)}.`,
});

export const checkDuplicates = defineTool({
  name: "check_duplicates",
  title: "Check for duplicate items",
  description:
    "Before create_item: find existing items of a pipeline that match a name or custom field values (per the pipeline's duplicate rules), best match first, with matched_on.",
  toolset: "items",
  scope: "items:read",
  operations: ["checkDuplicateItems"],
  annotations: READ,
  input: DuplicateCheckSchema,
  output: z.object({ items: z.array(DuplicateMatchSchema) }),
  run: async (ops, body) => ({ items: await ops.checkDuplicates(body) }),
  summary: (r) =>
    r.items.length === 0 ? "No duplicates." : `${countLine(r.items.length, "possible duplicate", null)} Best: ${describeItem(r.items[0]!)}.`,
});
