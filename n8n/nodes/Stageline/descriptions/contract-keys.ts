/**
 * Node parameter names → contract keys (issue 18, "a test fails when the node's fields drift from the contract").
 * The actions build request bodies and queries through these maps only; test/contract-drift.test.ts compares their
 * values with the keys of the zod schemas in @stageline/shared (ItemListQuerySchema, ItemCreateSchema, ...).
 */

/** Item list filters (GET /v1/ext/items): the "Filters" collection of Item → Get Many. */
export const ITEM_LIST_FILTERS = {
	pipelineId: 'pipeline_id',
	stageId: 'stage_id',
	statusId: 'status_id',
	shortId: 'short_id',
	name: 'name',
	search: 'q',
	createdAfter: 'created_after',
	updatedAfter: 'updated_after',
} as const;

/** Item create body (POST /v1/ext/items): top-level parameters and "Additional Fields"; custom fields go to `metadata`. */
export const ITEM_CREATE_FIELDS = {
	name: 'name',
	pipelineId: 'pipeline_id',
	stageId: 'stage_id',
	statusId: 'status_id',
	contactId: 'contact_id',
	source: 'source',
	customFields: 'metadata',
} as const;

/** Item update body (PATCH /v1/ext/items/{item_id}): "Update Fields"; custom fields go to `metadata`. */
export const ITEM_UPDATE_FIELDS = {
	name: 'name',
	stageId: 'stage_id',
	statusId: 'status_id',
	version: 'version',
	contactId: 'contact_id',
	source: 'source',
	customFields: 'metadata',
} as const;

/** Item delete query (DELETE /v1/ext/items/{item_id}, CONTRACT "Item deletion and erasure"): the "Options" collection of Item → Delete. */
export const ITEM_DELETE_QUERY = {
	version: 'version',
} as const;

/** CONTRACT "Upsert": the response header naming what an upsert did (`UPSERT_RESULT_HEADER` of @stageline/shared). */
export const UPSERT_RESULT_HEADER = 'Stageline-Upsert';

/** CONTRACT "Upsert": what an upsert can do (`UPSERT_RESULTS` of @stageline/shared). */
export const UPSERT_RESULTS = ['created', 'updated', 'unchanged'] as const;

/** Duplicate check body (POST /v1/ext/items/check-duplicates): the fields it compares. */
export const DUPLICATE_CHECK_FIELDS = {
	pipelineId: 'pipeline_id',
	name: 'name',
	contactId: 'contact_id',
	source: 'source',
	customFields: 'metadata',
} as const;

/** Task write fields (POST /v1/ext/tasks and PATCH /v1/ext/tasks/{task_id}). */
export const TASK_WRITE_FIELDS = {
	title: 'title',
	dueAt: 'due_at',
	assignedTo: 'assigned_to',
	description: 'description',
	priority: 'priority',
	taskType: 'task_type',
	itemId: 'item_id',
	durationMinutes: 'duration_minutes',
	reminderMinutes: 'reminder_minutes',
	notes: 'notes',
	isCompleted: 'is_completed',
} as const;

/** Task list filters (GET /v1/ext/tasks): the "Filters" collection of Task → Get Many. */
export const TASK_LIST_FILTERS = {
	itemId: 'item_id',
	isCompleted: 'is_completed',
	assignedTo: 'assigned_to',
	dueBefore: 'due_before',
	dueAfter: 'due_after',
} as const;

/** Spec "Task (response)": `priority` values (TASK_PRIORITIES of @stageline/shared). */
export const TASK_PRIORITIES = ['none', 'low', 'medium', 'high', 'urgent'] as const;

/** Spec "Task (response)": `task_type` values (TASK_TYPES of @stageline/shared). */
export const TASK_TYPES = ['to_do', 'call', 'email', 'meeting', 'follow_up'] as const;

/**
 * `values` (node parameter name → value) as a contract object through `map`; members whose parameter is not in
 * `map` are ignored, and empty values ('' or undefined) are left out.
 */
export function toContract(map: Readonly<Record<string, string>>, values: Readonly<Record<string, unknown>>): Record<string, unknown> {
	const out: Record<string, unknown> = {};
	for (const [param, key] of Object.entries(map)) {
		const value = values[param];
		if (value !== undefined && value !== '') out[key] = value;
	}
	return out;
}

/** Note create body (POST /v1/ext/notes, CONTRACT "Notes"): the Item picker, Body, and "Additional Fields" Pinned. */
export const NOTE_CREATE_FIELDS = {
	itemId: 'item_id',
	body: 'body',
	pinned: 'pinned',
} as const;

/** Note update body (PATCH /v1/ext/notes/{note_id}, CONTRACT "Notes"): "Update Fields". A note's item never changes. */
export const NOTE_UPDATE_FIELDS = {
	body: 'body',
	pinned: 'pinned',
	version: 'version',
} as const;

/** Note list filters (GET /v1/ext/notes, CONTRACT "Notes"): the "Filters" collection of Note → Get Many. */
export const NOTE_LIST_FILTERS = {
	itemId: 'item_id',
	pinned: 'pinned',
	updatedAfter: 'updated_after',
} as const;

/** Note delete query (DELETE /v1/ext/notes/{note_id}, CONTRACT "Notes"): the "Options" collection of Note → Delete. */
export const NOTE_DELETE_QUERY = {
	version: 'version',
} as const;

/** CONTRACT "Notes": the longest note body (NOTE_BODY_MAX of @stageline/shared). */
export const NOTE_BODY_MAX = 65536;
