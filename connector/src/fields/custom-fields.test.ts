import type { CustomField } from '@stageline/shared';
import {
  collectMetadata,
  customFieldKeyOf,
  hasCustomValues,
  toInputField,
  toInputFields,
  toOutputField,
  unionOfCustomFields,
} from './custom-fields';

const FIELDS: CustomField[] = [
  { key: 'email', label: 'Email', type: 'email', required: true },
  { key: 'deal_value', label: 'Deal value', type: 'number' },
  { key: 'vip', label: 'VIP', type: 'boolean' },
  { key: 'close_on', label: 'Close on', type: 'date' },
  { key: 'met_at', label: 'Met at', type: 'datetime' },
  { key: 'severity', label: 'Severity', type: 'select', options: ['Low', 'High'] },
  { key: 'website', label: 'Website', type: 'url' },
  { key: 'phone', label: 'Phone', type: 'phone' },
  { key: 'notes', label: 'Notes', type: 'text' },
];

function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    return (JSON.parse((err as Error).message) as { message: string }).message;
  }
  throw new Error('expected a throw');
}

describe('blueprint custom fields as Zapier input fields', () => {
  test('each type maps to its Zapier type under a custom__ key with the blueprint label', () => {
    const byKey = Object.fromEntries(toInputFields(FIELDS, 'create').map((f) => [f.key, f]));
    expect(Object.keys(byKey)).toEqual(FIELDS.map((f) => `custom__${f.key}`));
    expect(byKey['custom__email']).toMatchObject({ label: 'Email', type: 'string', required: true });
    expect(byKey['custom__deal_value']).toMatchObject({ type: 'number', required: false });
    expect(byKey['custom__vip']?.type).toBe('boolean');
    expect(byKey['custom__close_on']?.type).toBe('datetime');
    expect(byKey['custom__met_at']?.type).toBe('datetime');
    expect(byKey['custom__website']?.type).toBe('string');
    expect(byKey['custom__phone']?.type).toBe('string');
  });

  test('a select field offers its options as choices', () => {
    expect(toInputField(FIELDS[5]!, 'create').choices).toEqual([
      { value: 'Low', label: 'Low', sample: 'Low' },
      { value: 'High', label: 'High', sample: 'High' },
    ]);
  });

  test('required fields are only required when creating', () => {
    expect(toInputField(FIELDS[0]!, 'create').required).toBe(true);
    expect(toInputField(FIELDS[0]!, 'update').required).toBe(false);
    expect(toInputField(FIELDS[0]!, 'search').required).toBe(false);
  });

  test('every field has help text naming its key and format', () => {
    for (const field of toInputFields(FIELDS, 'update')) {
      expect(field.helpText).toContain(`\`${customFieldKeyOf(field.key)}\``);
      expect(field.helpText).toContain('Leave empty to keep the current value.');
    }
  });
});

describe('blueprint custom fields as Zapier output fields', () => {
  test('outputs keep the plain key (items carry custom values at the top level)', () => {
    expect(FIELDS.map(toOutputField).map((f) => [f.key, f.type])).toEqual([
      ['email', 'string'],
      ['deal_value', 'number'],
      ['vip', 'boolean'],
      ['close_on', 'datetime'],
      ['met_at', 'datetime'],
      ['severity', 'string'],
      ['website', 'string'],
      ['phone', 'string'],
      ['notes', 'string'],
    ]);
  });

  test('the union of several pipelines lists each key once; a key with conflicting types becomes text', () => {
    const union = unionOfCustomFields([
      [FIELDS[0]!, FIELDS[1]!],
      [{ key: 'email', label: 'E-mail', type: 'email' }, { key: 'deal_value', label: 'Value', type: 'text' }, FIELDS[2]!],
    ]);
    expect(union.map((f) => [f.key, f.label, f.type])).toEqual([
      ['email', 'Email', 'email'],
      ['deal_value', 'Deal value', 'text'],
      ['vip', 'VIP', 'boolean'],
    ]);
  });
});

describe('collecting metadata from Zapier input', () => {
  test('values are coerced to the blueprint types; other inputs and blanks are left out', () => {
    const metadata = collectMetadata(
      {
        name: 'Not custom',
        custom__email: ' ada@acme.example ',
        custom__deal_value: '1500',
        custom__vip: 'yes',
        custom__close_on: '2026-04-30T00:00:00-07:00',
        custom__met_at: '2026-03-01T09:30:00Z',
        custom__severity: 'high',
        custom__website: '',
        custom__phone: '+1 555 010 9999',
        custom__notes: '  keep my spaces ',
      },
      FIELDS,
      'create',
    );
    expect(metadata).toEqual({
      email: 'ada@acme.example',
      deal_value: 1500,
      vip: true,
      close_on: '2026-04-30',
      met_at: '2026-03-01T09:30:00Z',
      severity: 'High',
      phone: '+1 555 010 9999',
      notes: '  keep my spaces ',
    });
  });

  test('no custom values at all gives no metadata', () => {
    expect(collectMetadata({ name: 'x', custom__deal_value: '' }, FIELDS, 'create')).toBeUndefined();
    expect(hasCustomValues({ name: 'x', custom__deal_value: '  ' })).toBe(false);
    expect(hasCustomValues({ custom__deal_value: 0 })).toBe(true);
  });

  test('a value of the wrong type is refused with the field label', () => {
    expect(messageOf(() => collectMetadata({ custom__deal_value: 'lots' }, FIELDS, 'update'))).toBe(
      'Deal value (deal_value) must be a number, e.g. 1500; got "lots".',
    );
  });

  test("the contract's blueprint check runs too: formats, select options, required fields when creating", () => {
    const message = messageOf(() => collectMetadata({ custom__deal_value: '5', custom__severity: 'Urgent', custom__website: 'example.com' }, FIELDS, 'create'));
    expect(message).toContain('Some custom field values cannot be used:');
    expect(message).toContain('metadata.email is required for this pipeline.');
    expect(message).toContain('metadata.severity');
    expect(message).toContain('metadata.website must be a full URL starting with https://');
  });

  test('a field that is no longer in the blueprint is reported as unknown, naming the pipeline fields', () => {
    const message = messageOf(() => collectMetadata({ custom__budget: '10' }, FIELDS.slice(1, 2), 'update'));
    expect(message).toContain('Unknown custom field "budget". This pipeline\'s custom fields are: deal_value.');
  });
});
