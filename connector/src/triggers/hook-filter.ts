/**
 * The server-side filter of a trigger's REST hook (CONTRACT "Subscription filters (REST hooks)"): the trigger's
 * optional inputs Pipeline (`pipeline_id`), Stage (`stage_id`, item events only) and "Only when these fields change"
 * (`filter_fields`, item.updated and task.updated only) become the subscription's `filter`, so Stageline sends only the
 * events the Zap wants (a filtered-out event creates no delivery, costs no Zap task and no request).
 *
 * `passesHookFilter` applies the same filter to a delivered payload where the payload can tell (an item's pipeline and
 * stage, `changed_fields`): a Zap whose subscription was made before the inputs changed, or a sample list, never shows
 * what the filter excludes. Tasks carry no pipeline, so a task's pipeline filter is applied by the server only.
 * Pure apart from the input-field definitions.
 */
import { FIELD_FILTER_EVENTS, type EventName, type WebhookFilter } from '@stageline/shared';
import { invalidInput, toId } from '../fields/coerce';

/** The step's input values, as the operations see them. */
export type InputData = Readonly<Record<string, unknown>>;

/** The input key of "Only when these fields change". */
export const FILTER_FIELDS_INPUT = 'filter_fields';

/** Whether `event` is an item event (the only ones a stage can filter). */
export function isItemEvent(event: EventName): boolean {
  return event.startsWith('item.');
}

/** Whether `event` accepts a changed-field filter (CONTRACT: item.updated and task.updated). */
export function acceptsFieldFilter(event: EventName): boolean {
  return (FIELD_FILTER_EVENTS as readonly string[]).includes(event);
}

/** The field names of the "Only when these fields change" input: a list, a comma-separated text, or blank. */
function chosenFields(value: unknown): string[] {
  const raw = Array.isArray(value) ? value : typeof value === 'string' ? value.split(',') : [];
  const names = raw.map((v) => (typeof v === 'string' ? v.trim() : '')).filter((v) => v !== '' && !v.includes('{{'));
  return [...new Set(names)];
}

/**
 * The subscription filter of a trigger on `event` from its inputs, or undefined when nothing is chosen. Inputs the
 * event does not support (stage on task events, fields on other events) are never sent.
 * @throws InvalidData for a Stage without a Pipeline (CONTRACT: `stage_id` needs `pipeline_id`; only a mapped value
 *   can get there, the Stage dropdown needs the pipeline).
 */
export function hookFilterOf(event: EventName, inputData: InputData): WebhookFilter | undefined {
  const filter: WebhookFilter = {};
  const pipelineId = toId(inputData.pipeline_id, 'Pipeline');
  const stageId = isItemEvent(event) ? toId(inputData.stage_id, 'Stage') : undefined;
  if (stageId !== undefined && pipelineId === undefined) {
    throw invalidInput('Choose the Pipeline of the Stage: Stageline filters by a stage of one pipeline.');
  }
  if (pipelineId !== undefined) filter.pipeline_id = pipelineId;
  if (stageId !== undefined) filter.stage_id = stageId;
  if (acceptsFieldFilter(event)) {
    const fields = chosenFields(inputData[FILTER_FIELDS_INPUT]);
    if (fields.length > 0) filter.fields = fields;
  }
  return Object.keys(filter).length === 0 ? undefined : filter;
}

/**
 * Whether a delivered (or sample) payload of `event` passes `filter` as far as the payload tells: pipeline and stage of
 * an item, and at least one of `filter.fields` in a non-empty `changed_fields`. No filter: true.
 */
export function passesHookFilter(event: EventName, payload: Readonly<Record<string, unknown>>, filter: WebhookFilter | undefined): boolean {
  if (filter === undefined) return true;
  if (isItemEvent(event)) {
    if (filter.pipeline_id !== undefined && payload.pipeline_id !== filter.pipeline_id) return false;
    if (filter.stage_id !== undefined && payload.stage_id !== filter.stage_id) return false;
  }
  // an empty `changed_fields` is a sample built from a listed resource (the last change is unknown), not a change
  if (filter.fields !== undefined && Array.isArray(payload.changed_fields) && payload.changed_fields.length > 0) {
    const changed = new Set(payload.changed_fields as unknown[]);
    if (!filter.fields.some((field) => changed.has(field))) return false;
  }
  return true;
}
