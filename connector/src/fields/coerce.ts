/**
 * Coercion of Zapier input values into the JSON types of the Stageline contract.
 *
 * Zapier hands over mapped values as strings more often than not ("42", "true", "yes", " 2026-03-01 "), and blank
 * optional fields as "" (or leaves them out). These helpers turn them into numbers, booleans, ISO date-times and
 * trimmed ids, treat blanks as "not provided", and throw a user-facing error naming the field otherwise.
 */
import { errors } from 'zapier-platform-core';
import { toFieldErrors } from '@stageline/shared';

/** The user-facing error for a value that cannot be used (Zapier shows the message as is). */
export function invalidInput(message: string): Error {
  return new errors.Error(message, 'InvalidData', 400);
}

/** True for values that count as "not provided": undefined, null, and strings of only whitespace. */
export function isBlank(value: unknown): value is undefined | null | '' {
  return value === undefined || value === null || (typeof value === 'string' && value.trim() === '');
}

/** Quotes a value for an error message, shortened. */
function shown(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 57)}...` : text);
}

/** Text as given (numbers and booleans become their string form); undefined when blank. */
export function toText(value: unknown, label: string): string | undefined {
  if (isBlank(value)) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw invalidInput(`${label} must be text, got ${shown(value)}.`);
}

/** An identifier, trimmed; undefined when blank. */
export function toId(value: unknown, label: string): string | undefined {
  const text = toText(value, label);
  return text === undefined ? undefined : text.trim();
}

/** A required identifier, trimmed. @throws when blank. */
export function requireId(value: unknown, label: string): string {
  const id = toId(value, label);
  if (id === undefined) throw invalidInput(`${label} is required.`);
  return id;
}

/**
 * The id a dropdown field holds while the step is being edited, for filtering other dropdowns and dynamic fields:
 * undefined when blank or when it is still an unresolved mapping from an earlier step (`{{123__pipeline_id}}`),
 * whose value only exists when the Zap runs.
 */
export function chosenId(value: unknown): string | undefined {
  const id = typeof value === 'string' ? value.trim() : undefined;
  return id === undefined || id === '' || id.includes('{{') ? undefined : id;
}

/** A finite number from a number or numeric string ("1500", " 12.5 "); undefined when blank. */
export function toNumber(value: unknown, label: string): number | undefined {
  if (isBlank(value)) return undefined;
  const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value.trim()) : Number.NaN;
  if (!Number.isFinite(n)) throw invalidInput(`${label} must be a number, e.g. 1500; got ${shown(value)}.`);
  return n;
}

/** A whole number ("15", 15, "15.0"); undefined when blank. */
export function toInteger(value: unknown, label: string): number | undefined {
  const n = toNumber(value, label);
  if (n === undefined) return undefined;
  if (!Number.isInteger(n)) throw invalidInput(`${label} must be a whole number, e.g. 30; got ${shown(value)}.`);
  return n;
}

const TRUE_WORDS = new Set(['true', 'yes', 'y', '1', 'on']);
const FALSE_WORDS = new Set(['false', 'no', 'n', '0', 'off']);

/** A boolean from true/false, "true"/"false", "yes"/"no", "1"/"0", "on"/"off" (any case); undefined when blank. */
export function toBoolean(value: unknown, label: string): boolean | undefined {
  if (isBlank(value)) return undefined;
  if (typeof value === 'boolean') return value;
  const word = String(value).trim().toLowerCase();
  if (TRUE_WORDS.has(word)) return true;
  if (FALSE_WORDS.has(word)) return false;
  throw invalidInput(`${label} must be true or false (yes/no also work); got ${shown(value)}.`);
}

/** ISO 8601 date-time that names its offset, as the contract requires (`Z` or `+hh:mm`). */
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i;

/**
 * An ISO 8601 date-time with offset. Values that already carry an offset are kept as they are (the user's time zone
 * stays visible); other parseable dates ("2026-03-01", "March 1, 2026 09:30") are read as UTC and sent as
 * `...Z`. Unix timestamps (seconds or milliseconds) are accepted too. Undefined when blank.
 */
export function toDateTime(value: unknown, label: string): string | undefined {
  if (isBlank(value)) return undefined;
  if (typeof value === 'number') return fromEpoch(value, label);
  if (typeof value !== 'string') throw invalidInput(`${label} must be a date and time; got ${shown(value)}.`);
  const text = value.trim();
  if (ISO_WITH_OFFSET.test(text) && !Number.isNaN(Date.parse(text))) return normalizeOffset(text);
  if (/^\d{9,13}$/.test(text)) return fromEpoch(Number(text), label);
  const local = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?))?$/i.exec(text);
  // ISO without an offset is read as UTC; anything else goes to the lenient Date parser (Zapier runs in UTC).
  const parsed = local ? Date.parse(`${local[1]}T${local[2] ?? '00:00:00'}Z`) : Date.parse(text);
  if (Number.isNaN(parsed)) {
    throw invalidInput(`${label} must be a date and time, e.g. 2026-03-01T09:30:00Z; got ${shown(value)}.`);
  }
  return new Date(parsed).toISOString();
}

/** `+0100` becomes `+01:00`, a lower-case `t`/`z` upper-case (the forms the contract's pattern accepts). */
function normalizeOffset(text: string): string {
  return text.replace(/([+-]\d{2})(\d{2})$/, '$1:$2').replace(/z$/, 'Z').replace(/^(\d{4}-\d{2}-\d{2})t/, '$1T');
}

function fromEpoch(n: number, label: string): string {
  if (!Number.isFinite(n)) throw invalidInput(`${label} must be a date and time; got ${shown(n)}.`);
  const ms = Math.abs(n) < 1e11 ? n * 1000 : n;
  return new Date(ms).toISOString();
}

/**
 * A calendar date as YYYY-MM-DD. A date-time keeps the date as written in its own offset
 * ("2026-03-01T23:30:00-05:00" is March 1st), which is what the user picked in Zapier. Undefined when blank.
 */
export function toDate(value: unknown, label: string): string | undefined {
  if (isBlank(value)) return undefined;
  if (typeof value === 'string') {
    const leading = /^\s*(\d{4}-\d{2}-\d{2})(?:$|[T\s])/.exec(value);
    if (leading && !Number.isNaN(Date.parse(`${leading[1]}T00:00:00Z`))) return leading[1];
  }
  let iso: string | undefined;
  try {
    iso = toDateTime(value, label);
  } catch {
    throw invalidInput(`${label} must be a date, e.g. 2026-03-01; got ${shown(value)}.`);
  }
  return iso?.slice(0, 10);
}

/**
 * One of `allowed`: matched case-insensitively, with spaces and dashes read as underscores ("Follow up" →
 * `follow_up`). A value that matches nothing is returned trimmed, so the contract check can list the allowed
 * values. Undefined when blank.
 */
export function toChoice(value: unknown, allowed: readonly string[], label: string): string | undefined {
  const text = toText(value, label);
  if (text === undefined) return undefined;
  const trimmed = text.trim();
  if (allowed.includes(trimmed)) return trimmed;
  const normalized = trimmed.toLowerCase().replace(/[\s-]+/g, '_');
  const hit = allowed.find((a) => a.toLowerCase() === normalized || a.toLowerCase() === trimmed.toLowerCase());
  return hit ?? trimmed;
}

/** Copies only the entries whose value is not undefined ("only send provided fields"). */
export function definedOnly<T extends Record<string, unknown>>(record: T): Partial<T> {
  const out: Partial<T> = {};
  for (const [key, value] of Object.entries(record)) {
    if (value !== undefined) (out as Record<string, unknown>)[key] = value;
  }
  return out;
}

/** The part of a zod schema `checkedBody` uses (keeps zod itself a dependency of `@stageline/shared` only). */
export interface ContractSchema<T> {
  safeParse(value: unknown): { success: true; data: T } | { success: false; error: Parameters<typeof toFieldErrors>[0] };
}

/**
 * Checks a request body with its contract schema from `@stageline/shared` before it is sent, so a value the API
 * would refuse with 400 is reported with the contract's own messages without a round trip.
 * @returns the parsed body. @throws the user-facing InvalidData error listing every failing field.
 */
export function checkedBody<T>(schema: ContractSchema<T>, body: unknown, what: string): T {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const lines = toFieldErrors(result.error).map((e) => `- ${e.message}`);
  throw invalidInput([`The ${what} cannot be sent to Stageline:`, ...new Set(lines)].join('\n'));
}
