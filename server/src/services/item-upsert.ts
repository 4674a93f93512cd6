/**
 * Upsert: create or update an item, atomically (CONTRACT "Upsert (create or update, atomically)"; issue 25).
 * POST /v1/ext/items/upsert takes the create body; the pipeline's duplicate-detection rule picks the item to update,
 * exactly as the duplicate check does (services/duplicates.ts `duplicateCriteria`, db/items.ts `findDuplicateHits`):
 * no match creates it, one match updates it, several are `409 ambiguous_match`.
 *
 * Atomicity: everything after validation runs in ONE database transaction (db/sql.ts `SqlRunner.transaction`, READ
 * COMMITTED) that first takes the idempotency key (when given), then the match locks (db/upsert-locks.ts: advisory
 * locks on the company, pipeline and normalized match keys, which says why that is exact), then looks for the match
 * and creates or updates with the same one-statement writes as POST and PATCH (outbox events included), and stores
 * the idempotent response last. Concurrent upserts of one key, in any number of server processes on one database,
 * therefore make exactly one item; the others update or leave it.
 */
import { UPSERT_RESULT_HEADER, type Blueprint, type DuplicateDetection, type Item, type ItemUpsert, type UpsertResult, resourceLocation } from "@stageline/shared";
import type { AppContext } from "../context";
import * as items from "../db/items";
import { claimKey, storeResponse } from "../db/idempotency";
import type { PipelineStructure } from "../db/pipelines";
import { sqlOf, type TransactionQuery } from "../db/sql";
import { lockMatchKeys } from "../db/upsert-locks";
import { unknownApiKey } from "./api-keys";
import { MAX_DUPLICATE_MATCHES, duplicateCriteria } from "./duplicates";
import { domainError } from "./errors";
import { keyInUse, StoredResponseFound, type IdempotencyClaim } from "./idempotency";
import { readBlueprint } from "./item-format";
import { checkMetadata } from "./item-metadata";
import { resolvePlacement } from "./item-placement";
import { insertRefused, pipelineArchived, placeNewItem, planCreate, planUpdate, writeUpdate, type ItemChanges } from "./items";
import { failuresOf, invalidReference } from "./references";

/** How often an upsert looks for its match again when the matched item changed or went away under it. */
const MATCH_ATTEMPTS = 10;

/** What an upsert did (`Stageline-Upsert`) and the item as it is now. */
export interface UpsertOutcome {
  result: UpsertResult;
  item: Item;
}

/** The pipeline went away (or was archived) between the lock statement and the insert: answered after rollback. */
class InsertRefused extends Error {}

/**
 * CONTRACT "Upsert": creates or updates the company's item matching `input` under its pipeline's duplicate
 * detection.
 * - Validation as create: the pipeline must be the company's (422 `invalid_reference`) and not archived (422
 *   `pipeline_archived`, whether the upsert would create or update); `stage_id`/`status_id` must be the pipeline's
 *   and `metadata` must fit the blueprint (422 `invalid_reference` listing every failing field); required custom
 *   fields are checked only when it creates.
 * - No duplicate detection on the pipeline, or a body that carries no value the rule can compare (match "any": none
 *   of its fields; "all": not every one of them, since nothing could ever match it): 422 `upsert_unavailable`.
 * - No match: created exactly as POST /items would (`source` defaulting to `api`, version 1, `item.created`):
 *   result `created`.
 * - One match: the body's `name`, `stage_id`, `status_id`, `metadata` (merged: absent keys kept, null clears),
 *   `contact_id` and `source` are applied as PATCH would apply them (stage without `status_id`: the new stage's first
 *   status, or the current status when the stage stays). `source` and `contact_id` left out of the body keep the
 *   item's values: `source` is NOT reset to the create default `api` (a sync that omits it must not overwrite where
 *   the item came from). A real change increments `version` and emits `item.updated` (plus `item.stage_changed`):
 *   result `updated`; otherwise nothing is written or emitted: result `unchanged`.
 * - Several matches: 409 `ambiguous_match` with `matches`, their `item_id`s best match first (at most 50).
 * With an idempotency `claim` (CONTRACT "Idempotency") the response (status, body, `Location`, `Stageline-Upsert`)
 * is stored in the same transaction.
 * @returns the outcome and the item in the Item format.
 * @throws DomainError as listed above; 401 `invalid_api_key` when the company was deleted meanwhile; with a claim,
 * StoredResponseFound or 409 `idempotency_key_in_use`; 409 `version_conflict` when the matched item kept changing
 * under the upsert `MATCH_ATTEMPTS` times.
 */
export async function upsertItem(ctx: AppContext, companyId: string, input: ItemUpsert, claim?: IdempotencyClaim): Promise<UpsertOutcome> {
  return runPreparedUpsert(ctx, await prepareUpsert(ctx, companyId, input), claim);
}

/**
 * An upsert validated by `prepareUpsert` (no database write yet): what `runPreparedUpsert` and `createUnlessMatched`
 * run, and the match keys whose locks a batch's group takes up front (db/upsert-locks.ts `lockMatchKeysOfMany`).
 */
export interface PreparedUpsert {
  companyId: string;
  input: ItemUpsert;
  structure: PipelineStructure;
  blueprint: Blueprint;
  detection: DuplicateDetection;
  criteria: items.DuplicateCriterion[];
  changes: ItemChanges;
  request: { stageId: string | undefined; statusId: string | undefined };
  search: items.DuplicateSearch;
  /** The create it would make (pure; its failures, e.g. a required field missing, count only if it creates). */
  create: ReturnType<typeof planCreate>;
}

/**
 * The validation half of `upsertItem` (everything that may read through Prisma or the pipeline cache, before any
 * transaction opens): the pipeline, placement, metadata, duplicate detection and match criteria.
 * @throws DomainError as `upsertItem` does before it writes: 422 `invalid_reference` (an unknown pipeline, a bad
 * placement or metadata), 422 `upsert_unavailable`.
 */
export async function prepareUpsert(ctx: AppContext, companyId: string, input: ItemUpsert): Promise<PreparedUpsert> {
  // Everything that may read through Prisma or the pipeline cache happens here, before the transaction opens.
  const { pipeline: structure, placement: createPlacement } = await placeNewItem(ctx.prisma, companyId, input);
  const request = { stageId: input.stage_id, statusId: input.status_id };
  const blueprint = readBlueprint(structure.blueprint);
  const metadata = checkMetadata(blueprint, input.metadata, "update");
  if (!createPlacement.ok || !metadata.ok) throw invalidReference(failuresOf(createPlacement, metadata));
  const detection = blueprint.duplicate_detection;
  if (!detection) {
    throw domainError(
      "upsert_unavailable",
      `Pipeline "${structure.name}" has no duplicate detection, so an upsert cannot tell which item to update. Create items with POST /v1/ext/items, or configure duplicate detection on the pipeline.`,
    );
  }
  const criteria = duplicateCriteria(detection, {
    name: input.name,
    contact_id: input.contact_id,
    source: input.source,
    metadata: metadata.value,
  });
  if (!criteria) {
    const fields = detection.fields.join(", ");
    const needs = detection.match === "all" ? `every one of its fields (${fields})` : `at least one of its fields (${fields})`;
    throw domainError(
      "upsert_unavailable",
      `Pipeline "${structure.name}" matches items on ${needs}: send ${detection.match === "all" ? "all of them" : "one"} in the body (custom fields in metadata) so the upsert can find the item.`,
    );
  }
  const changes: ItemChanges = {
    name: input.name,
    stage_id: input.stage_id,
    status_id: input.status_id,
    contact_id: input.contact_id,
    source: input.source,
    metadata: input.metadata,
  };

  const search = { companyId, pipelineId: structure.id, criteria, match: detection.match, limit: MAX_DUPLICATE_MATCHES };
  const create = planCreate(companyId, structure, createPlacement, input);
  return { companyId, input, structure, blueprint, detection, criteria, changes, request, search, create };
}

/**
 * Inside a non-atomic batch's group transaction (services/batch.ts `runGroup`, db/sql.ts `inEnclosingTransaction`)
 * whose match locks are already held (`lockMatchKeysOfMany`, taken in lock-id order before any write): the create
 * half of an upsert, one statement (db/items.ts `insertItemUnlessMatchLocked`: the match under the locks, and the
 * insert only when nothing matched; it sees the group's own earlier creates). The item and its `item.created` event
 * commit with the group.
 * @returns the outcome `created` as `upsertItem` answers it; or null when nothing was written and the upsert must run
 * alone instead (`runPreparedUpsert`), after the group commits: it matched an item (an update, or `ambiguous_match`),
 * its create is invalid, or the pipeline or company went away meanwhile (the answers of those come from that run).
 * @throws the driver's error (the group then rolls back and its operations run one by one).
 */
export async function createUnlessMatched(ctx: AppContext, prepared: PreparedUpsert): Promise<UpsertOutcome | null> {
  const { create, search } = prepared;
  if (!create.ok) return null;
  const found = await items.insertItemUnlessMatchLocked(ctx.prisma, create.value.row, create.value.event, search);
  if (found.hits || found.companyGone || found.shortId === null) return null;
  return { result: "created", item: { ...create.value.created, short_id: found.shortId } };
}

/**
 * The write half of `upsertItem` for an upsert `prepareUpsert` validated: match, then create or update, atomically.
 * @throws DomainError and the rest as `upsertItem`.
 */
export async function runPreparedUpsert(ctx: AppContext, prepared: PreparedUpsert, claim?: IdempotencyClaim): Promise<UpsertOutcome> {
  const { companyId, input, structure, blueprint, detection, criteria, changes, request, search, create } = prepared;
  /** The outcome of a create made by `insertItemUnlessMatchLocked` (which found no match). */
  const created = async (q: TransactionQuery | null, found: items.LockedMatchOutcome) => {
    if (found.hits) throw new Error("created() called with matches"); // unreachable: callers check `hits` first
    if (found.companyGone) throw unknownApiKey(); // the company was deleted, with its keys, while the request ran
    if (found.shortId === null || !create.ok) throw new InsertRefused();
    const item = { ...create.value.created, short_id: found.shortId };
    if (q) await store(q, claim, 201, item, "created");
    return { result: "created" as const, item, wrote: true };
  };

  // Without an idempotency key, a valid create goes first as ONE autocommitted statement (locks, match under them,
  // insert when nothing matched): what a create costs. Only a match goes on to the transaction below (which takes the
  // locks again: they ended with that statement).
  let probe: items.LockedMatchOutcome | null = null;
  if (!claim && create.ok) {
    try {
      probe = await items.insertItemUnlessMatchLocked(ctx.prisma, create.value.row, create.value.event, search);
      if (!probe.hits) {
        const outcome = await created(null, probe);
        ctx.eventsCommitted();
        return { result: outcome.result, item: outcome.item };
      }
    } catch (err) {
      if (err instanceof InsertRefused) throw await insertRefused(ctx.prisma, companyId, structure, input.pipeline_id);
      throw err;
    }
    if (probe.pipeline === "archived") throw pipelineArchived(structure.name);
    if (probe.pipeline === "active" && probe.hits.length > 1) throw ambiguousMatch(structure.name, probe.hits.map((h) => h.id));
  }

  const attempt = async (q: TransactionQuery): Promise<UpsertOutcome & { wrote: boolean }> => {
    if (claim) {
      const outcome = await claimKey(q, claim);
      if (outcome.kind === "in_use") throw keyInUse();
      if (outcome.kind === "stored") throw new StoredResponseFound(outcome.stored);
    }
    let latestVersion = 0;
    for (let round = 1; round <= MATCH_ATTEMPTS; round++) {
      // With a valid create, one statement takes the locks, looks for the match under them and creates only when
      // there is none; without one, the locks, then the match query.
      let hits: items.DuplicateHit[];
      if (create.ok) {
        const found = await items.insertItemUnlessMatchLocked(q, create.value.row, create.value.event, search);
        if (!found.hits) return created(q, found);
        if (found.pipeline === "archived") throw pipelineArchived(structure.name);
        if (found.pipeline === "missing") throw new InsertRefused();
        hits = found.hits;
      } else {
        const state = round === 1 ? await lockMatchKeys(q, companyId, structure.id, detection.match, criteria) : "active";
        if (state === "archived") throw pipelineArchived(structure.name);
        if (state === "missing") throw new InsertRefused();
        hits = await items.findDuplicateHits(q, search);
      }
      if (hits.length > 1) throw ambiguousMatch(structure.name, hits.map((h) => h.id));
      if (hits.length === 0) throw invalidReference(create.ok ? [] : create.errors); // create.ok always found hits
      const current = await items.readPipelineItemIn(q, companyId, hits[0]!.id, structure);
      if (!current) continue; // deleted after the match query: look again
      latestVersion = current.version;
      const at = { stage: current.stage, status: current.status };
      const plan = planUpdate(current, blueprint, resolvePlacement(structure, request, at), changes);
      if (!plan.ok) throw invalidReference(plan.errors);
      if (!plan.value.change) {
        await store(q, claim, 200, plan.value.item, "unchanged");
        return { result: "unchanged", item: plan.value.item, wrote: false };
      }
      const { updated, companyGone } = await writeUpdate(q, companyId, current, plan.value.change);
      if (companyGone) throw unknownApiKey();
      if (updated) {
        await store(q, claim, 200, plan.value.item, "updated");
        return { result: "updated", item: plan.value.item, wrote: true };
      }
      // A PATCH (which takes no match lock) changed the item after it was read: apply the upsert on the newer version.
    }
    throw domainError(
      "version_conflict",
      `The matching item kept changing while this upsert ran (last seen at version ${latestVersion}). Send the upsert again.`,
      { current_version: latestVersion },
    );
  };

  let outcome: UpsertOutcome & { wrote: boolean };
  try {
    outcome = await sqlOf(ctx.prisma).transaction(attempt);
  } catch (err) {
    if (err instanceof InsertRefused) throw await insertRefused(ctx.prisma, companyId, structure, input.pipeline_id);
    throw err;
  }
  if (outcome.wrote) ctx.eventsCommitted();
  return { result: outcome.result, item: outcome.item };
}

/** The `Stageline-Upsert` header of an outcome (CONTRACT "Upsert"). */
export function upsertHeaders(result: UpsertResult): Record<string, string> {
  return { [UPSERT_RESULT_HEADER]: result };
}

/**
 * With a claim, stores the response in the upsert's transaction (replayed with the same header and `Location`),
 * tagged with the item's id so that deleting the item erases it (CONTRACT "Item deletion and erasure").
 */
async function store(q: TransactionQuery, claim: IdempotencyClaim | undefined, status: 200 | 201, item: Item, result: UpsertResult) {
  if (!claim) return;
  await storeResponse(q, claim, {
    status,
    body: JSON.stringify(item),
    location: status === 201 ? resourceLocation("items", item.item_id) : null,
    headers: upsertHeaders(result),
    itemId: item.item_id, // a 200 has no Location: this is how deleting the item finds (and erases) it

  });
}

/** CONTRACT "Upsert": 409 `ambiguous_match` listing the matching items' ids, best match first. */
function ambiguousMatch(pipelineName: string, matches: string[]) {
  return domainError(
    "ambiguous_match",
    `${matches.length}${matches.length >= MAX_DUPLICATE_MATCHES ? " or more" : ""} items of pipeline "${pipelineName}" match this upsert under its duplicate detection, so it cannot tell which one to update. Update one of them by id (PATCH /v1/ext/items/{item_id}), or merge them.`,
    { matches },
  );
}
