/** Response bodies the scripted Stageline answers with in the n8n tests (spec "Item (response)"). */

/** An item of pipeline p1, stage s1, status st1 (GET /v1/ext/items/i1). */
export const ITEM = {
	item_id: 'i1',
	short_id: 'SALES-1',
	name: 'Acme deal',
	pipeline: 'Sales',
	pipeline_id: 'p1',
	stage: 'Lead',
	stage_id: 's1',
	status: 'Open',
	status_id: 'st1',
	contact_id: null,
	source: 'n8n',
	created_at: '2026-01-01T00:00:00.000Z',
	updated_at: '2026-01-01T00:00:00.000Z',
	version: 1,
};
