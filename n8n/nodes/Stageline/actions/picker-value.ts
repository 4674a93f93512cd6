/** The value of a picker (resource locator) read from a collection, where n8n does not extract it. */
import type { IDataObject } from 'n8n-workflow';

/** The value of a picker given as a resource locator (`{ mode, value }`) or as plain text (a value saved before it was a picker). */
export function pickedValue(value: unknown): unknown {
	return value !== null && typeof value === 'object' && 'value' in (value as IDataObject) ? (value as IDataObject).value : value;
}
