/**
 * Subscription filters (CONTRACT "Subscription filters (REST hooks)"): the reference check of a subscribe's `filter`
 * and its stored and returned forms. The shape rules (stage needs pipeline, fields only with item.updated /
 * task.updated, at most MAX_FILTER_FIELDS names) are the contract's zod schema (400); this module checks what only
 * the database can tell (422 `invalid_reference`). The filter itself is applied at fan-out, in SQL (db/outbox.ts
 * `fanOutCtes`), so an excluded event creates no delivery row.
 *
 * Decisions: an archived pipeline is accepted (it stays readable and its items updatable, so its events still
 * happen); another company's pipeline reads as unknown (the same 422, never a hint that it exists); a `fields` filter
 * of `item.updated` accepts ITEM_CHANGE_FIELDS and the custom field keys of the filter's pipeline, or of any of the
 * company's pipelines when the filter names none; a `task.updated` one accepts TASK_CHANGE_FIELDS; a `note.updated`
 * one NOTE_CHANGE_FIELDS.
 */
import {
  ITEM_CHANGE_FIELDS,
  NOTE_CHANGE_FIELDS,
  TASK_CHANGE_FIELDS,
  type ProblemFieldError,
  type WebhookFilter,
  type WebhookSubscription,
} from "@stageline/shared";
import type { Db } from "../db/pipelines";
import * as pipelines from "../db/pipelines";
import type { SubscriptionFilterColumns } from "../db/webhook-subscriptions";
import { invalidReference } from "./references";

/** A filter as stored on the subscription row (db/webhook-subscriptions.ts `SubscriptionFilterColumns`). */
export type StoredFilter = SubscriptionFilterColumns;

/** The stored form of no filter. */
export const NO_FILTER: StoredFilter = { filterPipelineId: null, filterStageId: null, filterFields: [] };

/**
 * Checks the references of `filter` (of a subscription to `event`) for company `companyId` and returns its stored
 * form; `NO_FILTER` for none (`undefined`, `null` or `{}`). Field names are kept once each, in the order given.
 * @throws DomainError 422 `invalid_reference` listing every failing member (`filter.pipeline_id`, `filter.stage_id`,
 *   `filter.fields[i]`), each message naming the bad value.
 */
export async function checkSubscriptionFilter(
  db: Db,
  companyId: string,
  event: string,
  filter: WebhookFilter | null | undefined,
): Promise<StoredFilter> {
  if (!filter) return NO_FILTER;
  const errors: ProblemFieldError[] = [];
  const pipelineId = filter.pipeline_id ?? null;
  let pipelineKnown = pipelineId === null;
  if (pipelineId !== null) {
    pipelineKnown = (await pipelines.findPipeline(db, companyId, pipelineId)) !== null;
    if (!pipelineKnown) {
      errors.push({
        path: "filter.pipeline_id",
        message: `filter.pipeline_id "${pipelineId}" is not a pipeline of this company. List pipelines with GET /v1/ext/pipelines.`,
      });
    }
  }
  if (filter.stage_id !== undefined && pipelineId !== null && pipelineKnown) {
    if (!(await pipelines.findStage(db, pipelineId, filter.stage_id))) {
      errors.push({
        path: "filter.stage_id",
        message: `filter.stage_id "${filter.stage_id}" is not a stage of pipeline ${pipelineId}. List them with GET /v1/ext/pipelines/${pipelineId}/stages.`,
      });
    }
  }
  const fields = filter.fields ? [...new Set(filter.fields)] : [];
  if (fields.length > 0 && pipelineKnown) errors.push(...(await unknownFields(db, companyId, event, pipelineId, fields, filter.fields ?? [])));
  if (errors.length > 0) throw invalidReference(errors);
  return { filterPipelineId: pipelineId, filterStageId: filter.stage_id ?? null, filterFields: fields };
}

/** The failures of the `fields` names that neither the event's built-in fields nor (items) a custom field key name. */
async function unknownFields(
  db: Db,
  companyId: string,
  event: string,
  pipelineId: string | null,
  fields: string[],
  requested: readonly string[],
): Promise<ProblemFieldError[]> {
  const isTask = event.startsWith("task.");
  const isNote = event.startsWith("note.");
  const builtIn: readonly string[] = isTask ? TASK_CHANGE_FIELDS : isNote ? NOTE_CHANGE_FIELDS : ITEM_CHANGE_FIELDS;
  const others = fields.filter((f) => !builtIn.includes(f));
  const custom = isTask || isNote ? [] : await pipelines.findCustomFieldKeys(db, companyId, pipelineId, others);
  const where = pipelineId === null ? "any pipeline of this company" : `pipeline ${pipelineId}`;
  const valid = isTask
    ? `Task fields: ${TASK_CHANGE_FIELDS.join(", ")}.`
    : isNote
      ? `Note fields: ${NOTE_CHANGE_FIELDS.join(", ")}.`
      : `Item fields: ${ITEM_CHANGE_FIELDS.join(", ")} or a custom field key of ${where} (GET /v1/ext/pipelines/{pipeline_id}/fields).`;
  return others
    .filter((f) => !custom.includes(f))
    .map((f) => ({ path: `filter.fields[${requested.indexOf(f)}]`, message: `filter.fields names "${f}", which is not a field of ${event}. ${valid}` }));
}

/** The `filter` of a subscription object: `null` when none, else only the members it has. */
export function toFilterResponse(row: StoredFilter): WebhookSubscription["filter"] {
  if (row.filterPipelineId === null && row.filterStageId === null && row.filterFields.length === 0) return null;
  const filter: NonNullable<WebhookSubscription["filter"]> = {};
  if (row.filterPipelineId !== null) filter.pipeline_id = row.filterPipelineId;
  if (row.filterStageId !== null) filter.stage_id = row.filterStageId;
  if (row.filterFields.length > 0) filter.fields = row.filterFields;
  return filter;
}
