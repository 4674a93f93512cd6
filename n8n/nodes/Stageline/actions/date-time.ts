/**
 * Date-time parameters as the contract wants them (CONTRACT "Pipelines, blueprints, transitions": ISO 8601 with an
 * offset). n8n's date picker gives `YYYY-MM-DDTHH:mm:ss` without a zone; such values are read in the workflow's
 * time zone (`getTimezone()`), as n8n's own nodes do. Values with an offset (or `Z`) are kept as they are.
 */
import { DateTime } from 'luxon';

/** An offset or `Z` at the end of an ISO 8601 date-time (after its time part). */
const HAS_OFFSET = /T.*(?:[zZ]|[+-]\d{2}(?::?\d{2})?)$/;

/**
 * `value` as ISO 8601 text with an offset, or undefined when empty.
 * @param value a string (ISO 8601, with or without zone), a Date or a luxon DateTime.
 * @param zone the IANA zone a zone-less value is in (the workflow's time zone).
 * @returns e.g. `2026-03-01T09:00:00.000+01:00` (a date alone is that day's midnight); text that does not parse as ISO 8601 is returned trimmed, so the
 *   server's 400 names the field.
 */
export function toOffsetDateTime(value: unknown, zone: string): string | undefined {
	if (value === undefined || value === null || value === '') return undefined;
	if (value instanceof Date) return value.toISOString();
	if (typeof value === 'object' && typeof (value as { toISO?: unknown }).toISO === 'function') {
		return String((value as { toISO: () => string }).toISO());
	}
	const text = String(value).trim();
	if (text === '') return undefined;
	if (HAS_OFFSET.test(text)) return text;
	const parsed = DateTime.fromISO(text, { zone });
	return parsed.isValid ? (parsed.toISO() ?? text) : text;
}
