/**
 * Custom fields of the chosen pipeline's blueprint for n8n's resource mapper (GET /v1/ext/pipelines/{id}/fields),
 * typed as the blueprint says: number, boolean, date and datetime (dateTime), select (options), text for the rest.
 */
import type { FieldType, ILoadOptionsFunctions, ResourceMapperField, ResourceMapperFields } from 'n8n-workflow';
import type { CustomFieldType, PipelineField } from '@stageline/shared';
import { apiPath } from '../../shared/server-url';
import { apiJson } from '../../shared/transport';
import { currentPipeline } from './loadOptions';

/** The resource mapper type of each blueprint field type. */
export const FIELD_TYPES: Record<CustomFieldType, FieldType> = {
	text: 'string',
	email: 'string',
	url: 'string',
	phone: 'string',
	number: 'number',
	boolean: 'boolean',
	date: 'dateTime',
	datetime: 'dateTime',
	select: 'options',
};

/** One blueprint field as a resource mapper field; `required` only when creating. */
export function toMapperField(field: PipelineField, forCreate: boolean): ResourceMapperField {
	const mapped: ResourceMapperField = {
		id: field.key,
		displayName: field.type === 'date' ? `${field.label} (YYYY-MM-DD)` : field.label,
		required: forCreate && field.required,
		defaultMatch: false,
		canBeUsedToMatch: false,
		display: true,
		type: FIELD_TYPES[field.type] ?? 'string',
	};
	if (field.type === 'select') mapped.options = (field.options ?? []).map((o) => ({ name: o, value: o }));
	return mapped;
}

/** The fields of the current pipeline; an empty list (with a hint) until one is chosen. */
async function fieldsOf(context: ILoadOptionsFunctions, forCreate: boolean): Promise<ResourceMapperFields> {
	const pipelineId = await currentPipeline(context);
	if (pipelineId === '') return { fields: [], emptyFieldsNotice: 'Choose a pipeline (or an item) first.' };
	const fields = await apiJson<PipelineField[]>(context, { url: apiPath('pipelines', pipelineId, 'fields') });
	return {
		fields: fields.map((f) => toMapperField(f, forCreate)),
		emptyFieldsNotice: 'This pipeline has no custom fields.',
	};
}

/** Item → Create: required blueprint fields are required. */
export async function getCustomFieldsForCreate(this: ILoadOptionsFunctions): Promise<ResourceMapperFields> {
	return fieldsOf(this, true);
}

/** Item → Update: every field optional; the pipeline is the chosen item's. */
export async function getCustomFieldsForUpdate(this: ILoadOptionsFunctions): Promise<ResourceMapperFields> {
	return fieldsOf(this, false);
}

/** Item → Check Duplicates: every field optional. */
export async function getCustomFieldsForMatch(this: ILoadOptionsFunctions): Promise<ResourceMapperFields> {
	return fieldsOf(this, false);
}
