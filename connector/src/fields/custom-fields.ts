/**
 * Pipeline blueprint custom fields (CONTRACT "Pipelines, blueprints, transitions") as Zapier fields, and back.
 *
 * Input fields get the key `custom__<key>` so a custom field can never clash with the step's own fields (name,
 * stage_id, ...); `collectMetadata` maps them back into the `metadata` object of create, update and duplicate-check
 * bodies. Output fields keep the plain key, because items carry custom values at the top level (spec "Item").
 * Pure: unit tested in custom-fields.test.ts.
 */
import type { PlainInputField, PlainOutputField } from 'zapier-platform-core';
import { metadataSchemaFor, toFieldErrors, type CustomField } from '@stageline/shared';
import { invalidInput, isBlank, toBoolean, toDate, toDateTime, toNumber, toText } from './coerce';

/** Prefix of custom-field input keys. */
export const CUSTOM_FIELD_PREFIX = 'custom__';

/** What the input form is for: create enforces the blueprint's required flags; update and search never do. */
export type CustomFieldMode = 'create' | 'update' | 'search';

/** The input key of a custom field: `custom__<key>`. */
export function customInputKey(fieldKey: string): string {
  return `${CUSTOM_FIELD_PREFIX}${fieldKey}`;
}

/** The custom field key of an input key, or null when `inputKey` is not a custom-field input. */
export function customFieldKeyOf(inputKey: string): string | null {
  return inputKey.startsWith(CUSTOM_FIELD_PREFIX) && inputKey.length > CUSTOM_FIELD_PREFIX.length
    ? inputKey.slice(CUSTOM_FIELD_PREFIX.length)
    : null;
}

/** Help text per custom field type: what to enter, in the contract's formats. */
const TYPE_HELP: Record<CustomField['type'], string> = {
  text: 'Text.',
  email: 'An email address, e.g. ada@example.com.',
  number: 'A number, e.g. 1500.',
  boolean: 'Yes or no.',
  date: 'A date; Stageline keeps the day only (YYYY-MM-DD).',
  datetime: 'A date and time; sent with its time zone.',
  url: 'A full URL starting with https://, e.g. https://example.com.',
  phone: 'A phone number, e.g. +1 555 010 9999.',
  select: 'One of the options of this field.',
};

/** Zapier field type of a custom field type (number, boolean, date/datetime as datetime, everything else string). */
export function zapierTypeOf(type: CustomField['type']): 'string' | 'number' | 'boolean' | 'datetime' {
  switch (type) {
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'date':
    case 'datetime':
      return 'datetime';
    default:
      return 'string';
  }
}

/**
 * A custom field as a Zapier input field: key `custom__<key>`, the blueprint's label, the mapped type, the
 * options of a select field as choices, required only in "create" mode when the blueprint requires it.
 */
export function toInputField(field: CustomField, mode: CustomFieldMode): PlainInputField {
  const input: PlainInputField = {
    key: customInputKey(field.key),
    label: field.label,
    type: zapierTypeOf(field.type),
    required: mode === 'create' && field.required === true,
    helpText: `Custom field \`${field.key}\` of the pipeline. ${TYPE_HELP[field.type]}${
      mode === 'update' ? ' Leave empty to keep the current value.' : ''
    }${mode === 'search' ? ' Compared only when the pipeline uses it for duplicate detection.' : ''}`,
  };
  if (field.type === 'select' && field.options && field.options.length > 0) {
    input.choices = field.options.map((option) => ({ value: option, label: option, sample: option }));
  }
  return input;
}

/** The custom fields of a blueprint as input fields (see toInputField). */
export function toInputFields(fields: readonly CustomField[], mode: CustomFieldMode): PlainInputField[] {
  return fields.map((field) => toInputField(field, mode));
}

/** A custom field as a Zapier output field: the plain key (items carry custom values at the top level). */
export function toOutputField(field: CustomField): PlainOutputField {
  return { key: field.key, label: field.label, type: zapierTypeOf(field.type) };
}

/**
 * The union of the custom fields of several pipelines, first definition of each key first. A key defined with
 * different types in different pipelines becomes a text field (its values differ in type between items).
 */
export function unionOfCustomFields(lists: readonly (readonly CustomField[])[]): CustomField[] {
  const byKey = new Map<string, CustomField>();
  for (const list of lists) {
    for (const field of list) {
      const seen = byKey.get(field.key);
      if (!seen) {
        byKey.set(field.key, { ...field });
      } else if (seen.type !== field.type) {
        byKey.set(field.key, { key: seen.key, label: seen.label, type: 'text' });
      }
    }
  }
  return [...byKey.values()];
}

/** Coerces one Zapier value to the JSON type of its custom field; undefined when blank. */
export function coerceCustomValue(field: CustomField, value: unknown): unknown {
  const label = `${field.label} (${field.key})`;
  switch (field.type) {
    case 'number':
      return toNumber(value, label);
    case 'boolean':
      return toBoolean(value, label);
    case 'date':
      return toDate(value, label);
    case 'datetime':
      return toDateTime(value, label);
    case 'select': {
      const text = toText(value, label)?.trim();
      if (text === undefined) return undefined;
      // Options are matched case-insensitively so a mapped "won" still selects "Won".
      return field.options?.find((o) => o.toLowerCase() === text.toLowerCase()) ?? text;
    }
    default: {
      const text = toText(value, label);
      return field.type === 'text' ? text : text?.trim();
    }
  }
}

/**
 * The `metadata` object of a request from the `custom__*` inputs of `inputData`, coerced with the pipeline's
 * `fields` and checked with the contract's `metadataSchemaFor` (so users see the server's wording before a round
 * trip). Blank inputs are left out ("only send provided fields"). An input whose field is no longer in the
 * blueprint is sent as text, and the check reports it as unknown, naming the pipeline's fields.
 * Returns undefined when no custom value was provided.
 * @throws the user-facing InvalidData error listing every failing field.
 */
export function collectMetadata(
  inputData: Readonly<Record<string, unknown>>,
  fields: readonly CustomField[],
  mode: CustomFieldMode,
): Record<string, unknown> | undefined {
  const metadata: Record<string, unknown> = {};
  for (const [inputKey, raw] of Object.entries(inputData)) {
    const key = customFieldKeyOf(inputKey);
    if (key === null || isBlank(raw)) continue;
    const field = fields.find((f) => f.key === key);
    const value = field ? coerceCustomValue(field, raw) : toText(raw, key);
    if (value !== undefined) metadata[key] = value;
  }
  if (Object.keys(metadata).length === 0) return undefined;
  const checked = metadataSchemaFor({ custom_fields: [...fields] }, mode === 'create' ? 'create' : 'update').safeParse(metadata);
  if (!checked.success) {
    const lines = toFieldErrors(checked.error).map((e) => `- ${e.message}`);
    throw invalidInput(['Some custom field values cannot be used:', ...new Set(lines)].join('\n'));
  }
  return metadata;
}

/** True when `inputData` holds at least one non-blank `custom__*` value. */
export function hasCustomValues(inputData: Readonly<Record<string, unknown>>): boolean {
  return Object.entries(inputData).some(([key, value]) => customFieldKeyOf(key) !== null && !isBlank(value));
}
