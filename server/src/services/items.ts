/**
 * Items (spec "Items"; CONTRACT "Responses", "Lists", "Errors", "Pipelines, blueprints, transitions",
 * "Events and deliveries"): read, list, create and update, with their domain rules: references resolve within the
 * company, custom values follow the blueprint, `short_id` comes from the pipeline's sequence, updates use optimistic
 * locking, and every change writes its outbox events in the same atomic statement as the change itself.
 */
import {
  DEFAULT_ITEM_SOURCE,
  decodeKeysetCursor,
  type Item,
  type ItemChangedEvent,
  type ItemCreate,
  type ItemListQuery,
  type ItemUpdate,
  type Blueprint,
  resourceLocation,
} from "@stageline/shared";
import type { AppContext } from "../context";
import type { PrismaClient } from "../generated/prisma/client";
import * as items from "../db/items";
import * as pipelines from "../db/pipelines";
import { unknownApiKey } from "./api-keys";
import { domainError, notFound } from "./errors";
import { keyInUse, StoredResponseFound, type IdempotencyClaim } from "./idempotency";
import { uuidv7 } from "../db/webhook-dispatch";
import type { ItemRecord } from "../db/item-record";
import { readBlueprint, toItemResponse } from "./item-format";
import { checkMetadata, mergeMetadata } from "./item-metadata";
import { resolvePlacement, type Placement } from "./item-placement";
import { jsonAroundSlot, newSlotPlaceholder } from "../db/json-slot";
import type { PipelineStructure } from "../db/pipelines";
import type { Executor } from "../db/sql";
import { failed, failuresOf, invalidReference, passed, type Checked } from "./references";
import { itemChangedPayload } from "./previous-values";

/** Stands in for `short_id` in a new item's event payload until the insert statement takes the number. */
const SHORT_ID_SLOT = newSlotPlaceholder("short_id");

/** How often `updateItem` re-applies an update without `version` that lost a race before answering 409. */
const UPDATE_ATTEMPTS = 10;

/**
 * Spec "Items" (GET /items/{item_id}): the company's item in the Item format.
 * @throws DomainError 404 `not_found` when unknown or another company's.
 */
export async function getItem(prisma: PrismaClient, companyId: string, itemId: string): Promise<Item> {
  const row = await items.readItem(prisma, companyId, itemId);
  if (!row) throw notFound("Item", itemId);
  return toItemResponse(row);
}

/**
 * Spec "Items" (GET /items) + CONTRACT "Lists": the company's items newest first, filtered by `pipeline_id`,
 * `stage_id`, `status_id`, `short_id` (exact, case-insensitive), `name` (exact after trimming, case-insensitive),
 * `q` (substring of the name, case-insensitive), `created_after` and `updated_after` (strictly after), all combined
 * with AND, starting after `cursor`. An unknown value matches nothing (an empty page, never 404).
 * @returns up to `limit + 1` rows: the caller returns `limit` of them and links the next page when one more exists
 * (http/next-page-link.ts `pageWithLink`).
 * @throws DomainError 400 `validation_failed` for a malformed cursor.
 */
export function listItemRows(prisma: PrismaClient, companyId: string, query: ItemListQuery): Promise<ItemRecord[]> {
  return items.listItems(prisma, {
    companyId,
    pipelineId: query.pipeline_id,
    stageId: query.stage_id,
    statusId: query.status_id,
    shortId: query.short_id,
    name: query.name,
    search: query.q,
    createdAfter: query.created_after !== undefined ? new Date(query.created_after) : undefined,
    updatedAfter: query.updated_after !== undefined ? new Date(query.updated_after) : undefined,
    after: query.cursor !== undefined ? decodeKeysetCursor(query.cursor) : undefined,
    take: query.limit + 1,
  });
}

/**
 * Spec "Items" (POST /items) + CONTRACT "Responses" and "Pipelines, blueprints, transitions": creates an item in
 * the given pipeline and stage, in `status_id` or else the stage's first status, with `source` defaulting to `api`,
 * `version` 1 and `short_id` `${prefix}-${n}`, n from the pipeline's sequence, taken by the insert statement.
 * Validation reads the cached pipeline structure (db/pipelines.ts `findPipelineStructure`). The item, its `item.created`
 * outbox event (payload = the returned Item) and the event's deliveries are written in ONE atomic statement
 * (db/items.ts `insertItemWithEvent`); the dispatcher is woken afterwards. Id (uuid v7) and timestamps come from
 * the app.
 * With an idempotency `claim` (CONTRACT "Idempotency") the same statement also stores the 201 response under the key.
 * @returns the new item in the Item format.
 * @throws DomainError 422 `invalid_reference` listing every failing field: pipeline not the company's, stage not in
 * that pipeline, status not offered by the stage, unknown custom field, wrong value type, missing required field;
 * 422 `pipeline_archived` when the pipeline is archived (checked by the insert statement itself);
 * with a claim, StoredResponseFound when the key has a stored response, 409 `idempotency_key_in_use` while another
 * request holds it (nothing is written then).
 */
export async function createItem(ctx: AppContext, companyId: string, input: ItemCreate, claim?: IdempotencyClaim): Promise<Item> {
  const { pipeline, placement } = await placeNewItem(ctx.prisma, companyId, input);
  const plan = planCreate(companyId, pipeline, placement, input);
  if (!plan.ok) throw invalidReference(plan.errors);
  const { created, row, event } = plan.value;
  const { shortId, inUse, stored, companyGone } = await items.insertItemWithEvent(
    ctx.prisma,
    row,
    event,
    claim && { claim, location: resourceLocation("items", row.id) },
  );
  if (inUse) throw keyInUse();
  if (stored) throw new StoredResponseFound(stored);
  if (companyGone) throw unknownApiKey(); // the company was deleted, with its keys, while the request ran
  if (shortId === null) throw await insertRefused(ctx.prisma, companyId, pipeline, input.pipeline_id);
  created.short_id = shortId;
  ctx.eventsCommitted();
  return created;
}

/**
 * The pipeline structure of a new item (cached, db/pipelines.ts `findPipelineStructure`) and its placement: the
 * stage and status of `input` (`status_id` absent: the stage's first status), or their failures.
 * @throws DomainError 422 `invalid_reference` when the pipeline is not the company's.
 */
export async function placeNewItem(
  prisma: PrismaClient,
  companyId: string,
  input: Pick<ItemCreate, "pipeline_id" | "stage_id" | "status_id">,
): Promise<{ pipeline: PipelineStructure; placement: Checked<Placement> }> {
  let pipeline = await pipelines.findPipelineStructure(prisma, companyId, input.pipeline_id);
  if (!pipeline) throw unknownPipeline(input.pipeline_id);
  const request = { stageId: input.stage_id, statusId: input.status_id };
  let placement = resolvePlacement(pipeline, request);
  if (!placement.ok) {
    // Structures are immutable, so this is a bad reference; re-read once in case the cached copy predates a change.
    pipeline = await pipelines.refreshPipelineStructure(prisma, companyId, input.pipeline_id);
    if (!pipeline) throw unknownPipeline(input.pipeline_id);
    placement = resolvePlacement(pipeline, request);
  }
  return { pipeline, placement };
}

/** A new item ready to insert: its Item (short id filled in by the caller from the insert), row and event. */
export interface CreatePlan {
  created: Item;
  row: items.ItemToInsert;
  event: items.ItemEventToInsert;
}

/**
 * The pure part of a create (CONTRACT "Responses", "Pipelines, blueprints, transitions"): checks `metadata` against
 * the pipeline's blueprint in "create" mode (required fields, types, unknown keys) and builds the Item (`source`
 * defaulting to `api`, version 1, id uuid v7 and timestamps now), its row and its `item.created` event, whose
 * payload leaves the short id to the insert statement.
 * @param placement the resolved stage and status (services/item-placement.ts `resolvePlacement`), or its failures.
 * @returns the plan, or every failing field (placement and metadata) for a 422 `invalid_reference`.
 */
export function planCreate(companyId: string, pipeline: PipelineStructure, placement: Checked<Placement>, input: ItemCreate): Checked<CreatePlan> {
  const metadata = checkMetadata(readBlueprint(pipeline.blueprint), input.metadata, "create");
  if (!placement.ok || !metadata.ok) return failed(failuresOf(placement, metadata));
  const now = new Date();
  const record: ItemRecord = {
    id: uuidv7(now.getTime()),
    shortId: SHORT_ID_SLOT,
    name: input.name,
    contactId: input.contact_id ?? null,
    source: input.source ?? DEFAULT_ITEM_SOURCE,
    metadata: metadata.value,
    version: 1,
    createdAt: now,
    updatedAt: now,
    pipeline: { id: pipeline.id, name: pipeline.name, blueprint: pipeline.blueprint },
    stage: placement.value.stage,
    status: placement.value.status,
  };
  const created = toItemResponse(record);
  const row: items.ItemToInsert = {
    id: record.id,
    companyId,
    pipelineId: pipeline.id,
    stageId: record.stage.id,
    statusId: record.status.id,
    name: record.name,
    contactId: record.contactId,
    source: record.source ?? DEFAULT_ITEM_SOURCE,
    metadata: metadata.value,
    createdAt: now,
  };
  const event = { id: uuidv7(now.getTime()), type: "item.created", payload: jsonAroundSlot(created, SHORT_ID_SLOT) };
  return passed({ created, row, event });
}

/**
 * Why an insert statement took no pipeline: it is archived (422 `pipeline_archived`), or it went away after the
 * cached structure was read (the copy is forgotten; 422 `invalid_reference` as for an unknown pipeline).
 * @returns the error to throw.
 */
export async function insertRefused(prisma: PrismaClient, companyId: string, pipeline: PipelineStructure, requestedId: string) {
  if ((await pipelines.readPipelineArchivedAt(prisma, companyId, pipeline.id))?.archivedAt) return pipelineArchived(pipeline.name);
  await pipelines.refreshPipelineStructure(prisma, companyId, pipeline.id);
  return unknownPipeline(requestedId);
}

/** CONTRACT "Pipelines, blueprints, transitions": 422 `pipeline_archived` for a create in an archived pipeline. */
export function pipelineArchived(name: string) {
  return domainError(
    "pipeline_archived",
    `Pipeline "${name}" is archived: no item can be created in it. Its items stay readable and updatable; an owner or admin can restore it in the console.`,
    { errors: [{ path: "pipeline_id", message: `pipeline_id names the archived pipeline "${name}".` }] },
  );
}

/** 422 `invalid_reference` for a `pipeline_id` that is not one of the company's pipelines. */
export function unknownPipeline(pipelineId: string) {
  return invalidReference([
    {
      path: "pipeline_id",
      message: `pipeline_id "${pipelineId}" is not a pipeline of this company. List pipelines with GET /v1/ext/pipelines.`,
    },
  ]);
}

/**
 * Spec "Items" (PATCH /items/{item_id}) + CONTRACT "Responses", "Pipelines, blueprints, transitions" and
 * "Events and deliveries". Optimistic concurrency, no transaction: the item is read, the change computed, and one
 * statement stores it only if the version is still the one read, together with its events (db/items.ts
 * `updateItemWithEvents`). When another writer got there first, a request without `version` is applied again on
 * the newer item (up to `UPDATE_ATTEMPTS` times), so concurrent updates apply one after another and none is lost.
 * - `version`, when given, must equal the current version.
 * - `stage_id` must be a stage of the item's pipeline; moving stage without `status_id` takes the new stage's first
 *   status; `status_id` must be offered by the (new) stage.
 * - `metadata` is merged into the stored values (null clears an optional field).
 * A real change increments `version`, sets `updated_at` and writes `item.updated` (plus `item.stage_changed` when
 * the stage changed), each with `changed_fields` and `previous` (CONTRACT "Previous values in update events":
 * services/previous-values.ts; the before-values are the row the version-checked statement replaces). A request
 * that changes nothing returns the item as it is: no new version, no event.
 * @returns the item in the Item format.
 * @throws DomainError 404 `not_found` (unknown or another company's item); 409 `version_conflict` with
 * `current_version` (also when an update without `version` lost the race `UPDATE_ATTEMPTS` times); 422
 * `invalid_reference` listing every failing field.
 */
export async function updateItem(ctx: AppContext, companyId: string, itemId: string, input: ItemUpdate): Promise<Item> {
  for (let attempt = 1; ; attempt++) {
    const current = await items.readItem(ctx.prisma, companyId, itemId);
    if (!current) throw notFound("Item", itemId);
    if (input.version !== undefined && input.version !== current.version) throw versionConflict(current, input.version);

    const blueprint = readBlueprint(current.pipeline.blueprint);
    const request = { stageId: input.stage_id, statusId: input.status_id };
    const at = { stage: current.stage, status: current.status };
    let structure = await pipelines.findPipelineStructure(ctx.prisma, companyId, current.pipeline.id);
    let placement = structure ? resolvePlacement(structure, request, at) : null;
    if (!placement?.ok) {
      // Re-read once in case the cached copy predates a change (structures are immutable through the API).
      structure = await pipelines.refreshPipelineStructure(ctx.prisma, companyId, current.pipeline.id);
      if (!structure) throw notFound("Item", itemId);
      placement = resolvePlacement(structure, request, at);
    }
    const plan = planUpdate(current, blueprint, placement, input);
    if (!plan.ok) throw invalidReference(plan.errors);
    if (!plan.value.change) return plan.value.item;
    const { updated: stored, companyGone } = await writeUpdate(ctx.prisma, companyId, current, plan.value.change);
    if (stored) {
      ctx.eventsCommitted();
      return plan.value.item;
    }
    if (companyGone) throw unknownApiKey(); // the company was deleted, with its keys, while the request ran
    // Another writer changed (or deleted) the item after it was read. With a `version` the client asked for that
    // exact version: answer 409. Without one, apply the change again on top of the newer version (next attempt).
    if (input.version !== undefined || attempt >= UPDATE_ATTEMPTS) {
      const latest = await items.readItem(ctx.prisma, companyId, itemId);
      if (!latest) throw notFound("Item", itemId);
      throw versionConflict(latest, input.version ?? current.version);
    }
  }
}

/** The fields of an update (PATCH body without `version`; what an upsert applies to the item it matched). */
export type ItemChanges = Omit<ItemUpdate, "version">;

/** A real change: the item as it will be stored and the outbox events it writes. */
export interface ItemChange {
  next: ItemRecord;
  events: items.ItemChangeEvent[];
}

/**
 * The pure part of an update (spec "Items" PATCH; CONTRACT "Pipelines, blueprints, transitions", "Events and
 * deliveries"): checks `metadata` against the blueprint in "update" mode (null clears a field), merges it, and works
 * out the changed fields. A real change increments `version`, sets `updated_at` and yields `item.updated` (plus
 * `item.stage_changed` when the stage changed), each with `changed_fields` and `previous: { stage, status }`.
 * @param placement the stage and status after the change (`resolvePlacement` with the item's current ones), or its
 * failures.
 * @returns the resulting Item and, only when something changed, the `change` to store (`writeUpdate`); or every
 * failing field for a 422 `invalid_reference`.
 */
export function planUpdate(
  current: ItemRecord,
  blueprint: Blueprint,
  placement: Checked<Placement>,
  input: ItemChanges,
): Checked<{ item: Item; change: ItemChange | null }> {
  const metadata = checkMetadata(blueprint, input.metadata, "update");
  if (!placement.ok || !metadata.ok) return failed(failuresOf(placement, metadata));

  const next: ItemRecord = { ...current, stage: placement.value.stage, status: placement.value.status };
  const changedFields: string[] = [];
  if (input.name !== undefined && input.name !== current.name) {
    next.name = input.name;
    changedFields.push("name");
  }
  if (next.stage.id !== current.stage.id) changedFields.push("stage");
  if (next.status.id !== current.status.id) changedFields.push("status");
  if (input.contact_id !== undefined && input.contact_id !== current.contactId) {
    next.contactId = input.contact_id;
    changedFields.push("contact_id");
  }
  if (input.source !== undefined && input.source !== current.source) {
    next.source = input.source;
    changedFields.push("source");
  }
  const merged = mergeMetadata(blueprint, current.metadata, metadata.value);
  if (merged.changed.length > 0) {
    next.metadata = merged.metadata;
    changedFields.push(...merged.changed);
  }
  if (changedFields.length === 0) return passed({ item: toItemResponse(current), change: null });

  next.version = current.version + 1;
  next.updatedAt = new Date();
  const item = toItemResponse(next);
  const payload: ItemChangedEvent = itemChangedPayload(current, item, changedFields);
  const stamp = next.updatedAt.getTime();
  const events = [{ id: uuidv7(stamp), type: "item.updated", payload }];
  if (next.stage.id !== current.stage.id) events.push({ id: uuidv7(stamp), type: "item.stage_changed", payload });
  return passed({ item, change: { next, events } });
}

/**
 * Stores a planned change (`planUpdate`) of `current` at the version read, with its events, in one statement on
 * `db` (a client, or an open transaction: the upsert's). See db/items.ts `updateItemWithEvents`.
 * @returns `updated` false when the item is no longer at that version (or gone); `companyGone` when the company is.
 */
export function writeUpdate(db: Executor, companyId: string, current: ItemRecord, change: ItemChange): Promise<{ updated: boolean; companyGone: boolean }> {
  const { next, events } = change;
  return items.updateItemWithEvents(
    db,
    { id: current.id, companyId, expectedVersion: current.version, updatedAt: next.updatedAt },
    {
      name: next.name,
      stageId: next.stage.id,
      statusId: next.status.id,
      contactId: next.contactId,
      source: next.source,
      metadata: next.metadata,
    },
    events,
  );
}

/** CONTRACT "Errors": 409 `version_conflict` carrying `current_version`. */
function versionConflict(current: ItemRecord, expected: number) {
  return domainError(
    "version_conflict",
    `Item ${current.id} is at version ${current.version}, not ${expected}: it was changed since you read it. Fetch it again and reapply your change.`,
    { current_version: current.version },
  );
}
