/**
 * The server-side filter of each subscription the trigger makes (CONTRACT "Subscription filters (REST hooks)"), from
 * the node's parameters: Pipeline (item events: items of that pipeline; task events: tasks linked to an item of it, so
 * a task without an item does not start the workflow when a Pipeline is chosen; note events: notes on an item of it),
 * Stage (item events: items in that stage after the change; needs the pipeline) and "Only When These Fields Change"
 * (values `item:<field>` apply to Item Updated, `task:<field>` to Task Updated, `note:<field>` to Note Updated). Stageline then sends only the events the workflow wants: a
 * filtered-out event creates no delivery, so the node does not filter after delivery. Pure.
 */
import type { EventName, WebhookFilter } from '@stageline/shared';

/** CONTRACT "Previous values in update events": the built-in item fields `changed_fields` names (ITEM_CHANGE_FIELDS of @stageline/shared). */
export const ITEM_CHANGE_FIELDS = ['name', 'stage', 'status', 'contact_id', 'source'] as const;

/** CONTRACT "Previous values in update events": the task fields `changed_fields` names (TASK_CHANGE_FIELDS of @stageline/shared). */
export const TASK_CHANGE_FIELDS = [
	'title',
	'description',
	'due_at',
	'priority',
	'is_completed',
	'completed_at',
	'task_type',
	'assigned_to',
	'item_id',
	'notes',
	'duration_minutes',
	'reminder_minutes',
] as const;

/** CONTRACT "Notes": the note fields `changed_fields` of note.updated names (NOTE_CHANGE_FIELDS of @stageline/shared). */
export const NOTE_CHANGE_FIELDS = ['body', 'pinned'] as const;

/** The prefix of a changed-field choice, by the event it applies to. */
export const FIELD_PREFIX: Partial<Record<EventName, string>> = { 'item.updated': 'item:', 'task.updated': 'task:', 'note.updated': 'note:' };

/** The filter parameters of the node. */
export interface FilterParameters {
	pipelineId: string;
	stageId: string;
	/** `item:<field>` / `task:<field>` values of "Only When These Fields Change". */
	changedFields: string[];
}

/** A string parameter trimmed ('' for anything else). */
function text(value: unknown): string {
	return typeof value === 'string' ? value.trim() : '';
}

/** Reads the filter parameters (missing ones are empty). */
export function filterParameters(get: (name: string, fallback: unknown) => unknown): FilterParameters {
	const fields = get('changedFields', []);
	return {
		pipelineId: text(get('pipelineId', '')),
		stageId: text(get('stageId', '')),
		changedFields: Array.isArray(fields) ? fields.map(text).filter((f) => f !== '') : [],
	};
}

/**
 * The `filter` of the subscription to `event`, or undefined for none.
 * @throws Error when a Stage is given without its Pipeline (the contract needs both; the Stage list needs the pipeline).
 */
export function subscriptionFilter(event: EventName, params: FilterParameters): WebhookFilter | undefined {
	const filter: WebhookFilter = {};
	if (params.pipelineId !== '') filter.pipeline_id = params.pipelineId;
	if (event.startsWith('item.')) {
		if (params.stageId !== '' && params.pipelineId === '') throw new Error('Choose the Pipeline of the Stage: Stageline filters by a stage of one pipeline.');
		if (params.stageId !== '') filter.stage_id = params.stageId;
	}
	const prefix = FIELD_PREFIX[event];
	if (prefix !== undefined) {
		const fields = [...new Set(params.changedFields.filter((f) => f.startsWith(prefix)).map((f) => f.slice(prefix.length)))];
		if (fields.length > 0) filter.fields = fields;
	}
	return Object.keys(filter).length === 0 ? undefined : filter;
}

/** A filter as a comparable string (keys sorted, fields sorted; '' for none), to see whether a subscription's filter is still the wanted one. */
export function filterKey(filter: WebhookFilter | null | undefined): string {
	if (filter === undefined || filter === null) return '';
	return JSON.stringify([filter.pipeline_id ?? null, filter.stage_id ?? null, [...(filter.fields ?? [])].sort()]);
}
