import { z } from "zod";
import type { BuiltInItemField } from "./blueprint";
import {
  AT_LEAST_ONE_FIELD_MESSAGE,
  dateTimeField,
  hasAnyField,
  idField,
  recordField,
  strictBody,
  textField,
  wholeNumberField,
} from "./fields";
import { CursorSchema, LimitSchema } from "./pagination";
import { NUL_FREE_PATTERN, integerQueryParam, nulFreeMessage, queryParam, queryParams } from "./query-params";
import { INT_MAX, NAME_MAX } from "./limits";

const timestamp = z.iso.datetime({ offset: true });

/** CONTRACT "Responses": the `source` an item gets when the create body leaves it out (the connector sends `zapier`). */
export const DEFAULT_ITEM_SOURCE = "api";

/** The built-in keys of the Item object (spec "Item (response)" plus CONTRACT "Extra Item fields"). */
const itemShape = {
  item_id: z.string(),
  short_id: z.string(),
  name: z.string(),
  pipeline: z.string(),
  pipeline_id: z.string(),
  stage: z.string(),
  stage_id: z.string(),
  status: z.string(),
  status_id: z.string(),
  contact_id: z.string().nullable(),
  source: z.string().nullable(),
  created_at: timestamp,
  updated_at: timestamp,
  version: z.number().int().min(1),
  // `satisfies` is a compile-time guard: every Item key must be listed in BUILT_IN_ITEM_FIELDS,
  // so no custom field can shadow it.
} satisfies Partial<Record<BuiltInItemField, z.ZodType>>;

/**
 * Spec "Item (response)" + CONTRACT "Responses": the Item object of GET /items, GET /items/{id}, the create (201)
 * and update (200) responses and the item event payloads. `pipeline`/`stage`/`status` are names, the `*_id`
 * fields their ids; `contact_id` and `source` are always present (null when unset). The pipeline blueprint's
 * custom fields appear at the top level keyed by their field names, hence the catch-all.
 */
export const ItemSchema = z.object(itemShape).catchall(z.unknown());
/** An item as returned by the API (built-in fields plus custom fields). */
export type Item = z.infer<typeof ItemSchema>;

/**
 * Spec "Items" (create body) + CONTRACT "Responses" (`contact_id`, `source` at the top level; `source` defaults
 * to `api`) and "Scopes and limits" (names 1..255). Unknown top-level fields are a 400. `metadata` holds custom
 * field values keyed by field name; they are checked against the pipeline blueprint by the server (422).
 */
export const ItemCreateSchema = strictBody({
  name: textField("name"),
  pipeline_id: idField("pipeline_id"),
  stage_id: idField("stage_id"),
  status_id: idField("status_id").optional(),
  contact_id: idField("contact_id").nullable().optional(),
  source: textField("source").optional(),
  metadata: recordField("metadata").optional(),
});
/** Body of POST /v1/ext/items. */
export type ItemCreate = z.infer<typeof ItemCreateSchema>;

/**
 * Spec "Items" (update body: every field optional) + CONTRACT "Responses" and "Pipelines, blueprints, transitions".
 * `version` is the expected current version (mismatch: 409 with `current_version`); `contact_id: null` unlinks the
 * contact. Unknown top-level fields are a 400, and so is an empty body.
 */
export const ItemUpdateSchema = strictBody({
  name: textField("name").optional(),
  stage_id: idField("stage_id").optional(),
  status_id: idField("status_id").optional(),
  version: wholeNumberField("version", 1).optional(),
  contact_id: idField("contact_id").nullable().optional(),
  source: textField("source").optional(),
  metadata: recordField("metadata").optional(),
})
  .refine(hasAnyField, { error: AT_LEAST_ONE_FIELD_MESSAGE })
  // CONTRACT "HTTP semantics": the document states the rule (`{}` is a 400).
  .meta({ minProperties: 1 });
/** Body of PATCH /v1/ext/items/{item_id}. */
export type ItemUpdate = z.infer<typeof ItemUpdateSchema>;

/** CONTRACT "Lists": shortest and longest `q` (substring of the item name). */
export const ITEM_SEARCH_MIN = 2;
export const ITEM_SEARCH_MAX = 100;

/**
 * A text filter of the items list (as a query parameter it is trimmed and blank counts as absent, query-params.ts).
 * @param min / max length after trimming.
 */
function textFilter(field: string, min: number, max: number) {
  return z
    .string({ error: `${field} must be given once, as text.` })
    .min(min, { error: `${field} must be at least ${min} characters.` })
    .max(max, { error: `${field} must be at most ${max} characters.` })
    .regex(NUL_FREE_PATTERN, { error: nulFreeMessage(field) })
    .optional();
}

/**
 * Spec "Items" (list query parameters) + CONTRACT "Lists" (`limit` 1..500 default 100, opaque `cursor`), and the
 * items filters of CONTRACT "Lists", all optional and combined with AND: `pipeline_id`, `stage_id`, `status_id`,
 * `short_id` (exact, case-insensitive), `name` (exact, trimmed, case-insensitive), `q` (substring of the name,
 * case-insensitive, 2..100 characters), `created_after` and `updated_after` (ISO 8601 with a time zone, strictly
 * after). Unknown query parameters are ignored; an empty value counts as absent; an unknown filter value matches
 * nothing (the server answers an empty list).
 */
export const itemListFilters = {
  pipeline_id: idField("pipeline_id").optional(),
  stage_id: idField("stage_id").optional(),
  status_id: idField("status_id").optional(),
  short_id: textFilter("short_id", 1, NAME_MAX),
  name: textFilter("name", 1, NAME_MAX),
  q: textFilter("q", ITEM_SEARCH_MIN, ITEM_SEARCH_MAX),
  created_after: dateTimeField("created_after").optional(),
  updated_after: dateTimeField("updated_after").optional(),
};

/** The items list query: `itemListFilters` as query parameters, plus `limit` and `cursor`. */
export const ItemListQuerySchema = z.object({
  ...queryParams(itemListFilters),
  limit: LimitSchema,
  cursor: CursorSchema,
});
/** Parsed query of GET /v1/ext/items. */
export type ItemListQuery = z.infer<typeof ItemListQuerySchema>;

/**
 * CONTRACT "Duplicate check": body of POST /v1/ext/items/check-duplicates, the create body with only
 * `pipeline_id` required. `name` and `metadata` are compared; `stage_id`, `status_id`, `contact_id` and `source`
 * are accepted (so a create body can be sent as is) and ignored.
 */
export const DuplicateCheckSchema = strictBody({
  name: textField("name").optional(),
  pipeline_id: idField("pipeline_id"),
  stage_id: idField("stage_id").optional(),
  status_id: idField("status_id").optional(),
  contact_id: idField("contact_id").nullable().optional(),
  source: textField("source").optional(),
  metadata: recordField("metadata").optional(),
});
/** Body of POST /v1/ext/items/check-duplicates. */
export type DuplicateCheck = z.infer<typeof DuplicateCheckSchema>;

/** CONTRACT "Duplicate check": one entry of the 200 response array, an Item plus the names of the fields that matched. */
export const DuplicateMatchSchema = ItemSchema.extend({
  matched_on: z.array(z.string()),
});
/** A duplicate-check match. */
export type DuplicateMatch = z.infer<typeof DuplicateMatchSchema>;

/**
 * CONTRACT "Item deletion and erasure": query of DELETE /v1/ext/items/{item_id}. `version` (optional) is the expected
 * current version, as in PATCH: a mismatch is `409 version_conflict` with `current_version`. The request has no body.
 */
export const ItemDeleteQuerySchema = z.object({
  version: integerQueryParam(
    z
      .number({ error: "version must be a whole number from 1 upward." })
      .int({ error: "version must be a whole number from 1 upward." })
      .min(1, { error: "version must be a whole number from 1 upward." })
      .max(INT_MAX, { error: "version is too large." })
      .optional(),
  ),
});
/** Parsed query of DELETE /v1/ext/items/{item_id}. */
export type ItemDeleteQuery = z.infer<typeof ItemDeleteQuerySchema>;

/**
 * CONTRACT "Upsert (create or update, atomically)": body of POST /v1/ext/items/upsert, exactly the create body. The
 * pipeline's duplicate-detection rule picks the item to update; the body's `stage_id`, `status_id`, `metadata`,
 * `contact_id`, `source` and `name` are then applied to it.
 */
export const ItemUpsertSchema = ItemCreateSchema;
/** Body of POST /v1/ext/items/upsert. */
export type ItemUpsert = z.infer<typeof ItemUpsertSchema>;

/** CONTRACT "Upsert": what an upsert did, sent as the `Stageline-Upsert` response header. */
export const UPSERT_RESULTS = ["created", "updated", "unchanged"] as const;
/** One upsert outcome. */
export type UpsertResult = (typeof UPSERT_RESULTS)[number];

/** CONTRACT "Upsert": the response header naming the outcome (`created` with 201, `updated`/`unchanged` with 200). */
export const UPSERT_RESULT_HEADER = "Stageline-Upsert";

/**
 * CONTRACT "Previous values in update events": the built-in item fields that `changed_fields` can name (beside the
 * pipeline's custom field keys). `stage` and `status` are reported by name, as before.
 */
export const ITEM_CHANGE_FIELDS = ["name", "stage", "status", "contact_id", "source"] as const;
/** A built-in item field name of `changed_fields`. */
export type ItemChangeField = (typeof ITEM_CHANGE_FIELDS)[number];

/**
 * CONTRACT "Item deletion and erasure": what the delivery log keeps as the body of an event of a deleted item once its
 * values are erased (and what a redeliver of it refuses with `410 payload_erased`).
 */
export const ErasedPayloadSchema = z.object({
  item_id: z.string(),
  erased: z.literal(true),
});
/** An erased event body. */
export type ErasedPayload = z.infer<typeof ErasedPayloadSchema>;
