/**
 * Custom field values from the resource mapper (methods/resourceMapping.ts) as the `metadata` object of a request
 * (CONTRACT "Pipelines, blueprints, transitions": values typed as the blueprint says: number, boolean,
 * date YYYY-MM-DD, datetime ISO 8601 with offset, text for the rest).
 */
import type { IDataObject, IExecuteFunctions, ResourceMapperValue } from 'n8n-workflow';
import type { CustomFieldType, PipelineField } from '@stageline/shared';
import { apiPath } from '../../shared/server-url';
import { apiJson } from '../../shared/transport';
import { toOffsetDateTime } from './date-time';

/** A date or date-time value as n8n may hand it over: a string, a Date, or a luxon DateTime. */
function isoOf(value: unknown): string {
	if (value instanceof Date) return value.toISOString();
	if (value !== null && typeof value === 'object' && typeof (value as { toISO?: unknown }).toISO === 'function') {
		return String((value as { toISO: () => string }).toISO());
	}
	return String(value).trim();
}

/**
 * One value as the blueprint type wants it. Text that reads as a number or boolean is converted for those types;
 * a date-time without an offset (n8n's date picker) is read in `zone`; anything the server would refuse is sent as
 * it is, so its 422 names the field.
 * @param zone IANA zone of zone-less date-times (the workflow's time zone).
 */
export function coerceCustomValue(type: CustomFieldType | undefined, value: unknown, zone = 'UTC'): unknown {
	switch (type) {
		case 'number':
			return typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : value;
		case 'boolean':
			if (value === 'true') return true;
			if (value === 'false') return false;
			return value;
		case 'date':
			return isoOf(value).slice(0, 10);
		case 'datetime':
			return toOffsetDateTime(value, zone) ?? value;
		default:
			return value;
	}
}

/** The blueprint fields of pipelines, cached for one execution (one request per pipeline). */
const fieldCache = new WeakMap<object, Map<string, Promise<PipelineField[]>>>();

/** GET /v1/ext/pipelines/{pipeline_id}/fields, once per execution and pipeline. */
export function pipelineFields(context: IExecuteFunctions, pipelineId: string, itemIndex: number): Promise<PipelineField[]> {
	const key = context.getExecuteData?.() ?? context;
	let perPipeline = fieldCache.get(key);
	if (perPipeline === undefined) {
		perPipeline = new Map();
		fieldCache.set(key, perPipeline);
	}
	let fields = perPipeline.get(pipelineId);
	if (fields === undefined) {
		fields = apiJson<PipelineField[]>(context, { url: apiPath('pipelines', pipelineId, 'fields'), itemIndex });
		perPipeline.set(pipelineId, fields);
	}
	return fields;
}

/**
 * The `metadata` object of the item at `itemIndex`: the resource mapper's values without empty ones, each coerced
 * to its blueprint type; undefined when none is set. In "Map Automatically" mode (`autoMapInputData`) the values are
 * the input item's JSON members whose names are keys of the pipeline's blueprint.
 * @param pipelineOf the pipeline whose blueprint types the values (called only when a value may be set).
 */
export async function customFieldValues(
	context: IExecuteFunctions,
	itemIndex: number,
	pipelineOf: () => Promise<string>,
): Promise<IDataObject | undefined> {
	const mapper = context.getNodeParameter('customFields', itemIndex, null) as ResourceMapperValue | null;
	const isSet = ([, v]: [string, unknown]) => v !== undefined && v !== null && v !== '';
	const autoMap = mapper?.mappingMode === 'autoMapInputData';
	let entries: Array<[string, unknown]> = autoMap ? [] : Object.entries(mapper?.value ?? {}).filter(isSet);
	if (!autoMap && entries.length === 0) return undefined;
	const fields = await pipelineFields(context, await pipelineOf(), itemIndex);
	const types = new Map(fields.map((f) => [f.key, f.type]));
	if (autoMap) {
		const json = context.getInputData()[itemIndex]?.json ?? {};
		entries = Object.entries(json).filter(([key]) => types.has(key)).filter(isSet);
		if (entries.length === 0) return undefined;
	}
	const zone = context.getTimezone();
	const out: IDataObject = {};
	for (const [key, value] of entries) out[key] = coerceCustomValue(types.get(key), value, zone) as IDataObject[string];
	return out;
}
