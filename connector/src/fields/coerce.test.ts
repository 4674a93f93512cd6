import { TASK_PRIORITIES, TASK_TYPES } from '@stageline/shared';
import { definedOnly, isBlank, requireId, toBoolean, toChoice, toDate, toDateTime, toInteger, toNumber, toText } from './coerce';

/** The user-facing message inside a core AppError (its message is JSON). */
function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    return (JSON.parse((err as Error).message) as { message: string }).message;
  }
  throw new Error('expected a throw');
}

describe('blank values count as not provided', () => {
  test.each([undefined, null, '', '   '])('%p is blank', (value) => {
    expect(isBlank(value)).toBe(true);
    expect(toText(value, 'Name')).toBeUndefined();
    expect(toNumber(value, 'Amount')).toBeUndefined();
    expect(toBoolean(value, 'Done')).toBeUndefined();
    expect(toDateTime(value, 'Due')).toBeUndefined();
  });

  test('zero and false are values, not blanks', () => {
    expect(toNumber(0, 'Amount')).toBe(0);
    expect(toBoolean(false, 'Done')).toBe(false);
  });

  test('a required id that is blank names the field', () => {
    expect(messageOf(() => requireId(' ', 'Item ID'))).toBe('Item ID is required.');
  });

  test('definedOnly drops undefined entries and keeps null, 0, false', () => {
    expect(definedOnly({ a: undefined, b: null, c: 0, d: false })).toEqual({ b: null, c: 0, d: false });
  });
});

describe('numbers', () => {
  test('numeric strings become numbers', () => {
    expect(toNumber(' 1500.5 ', 'Deal value')).toBe(1500.5);
    expect(toInteger('30', 'Duration')).toBe(30);
    expect(toInteger('30.0', 'Duration')).toBe(30);
  });

  test('text that is not a number is refused with the field name and the value', () => {
    expect(messageOf(() => toNumber('12 EUR', 'Deal value'))).toBe('Deal value must be a number, e.g. 1500; got "12 EUR".');
  });

  test('fractions are refused where whole minutes are expected', () => {
    expect(messageOf(() => toInteger('2.5', 'Duration'))).toMatch(/Duration must be a whole number/);
  });
});

describe('booleans', () => {
  test.each([
    ['true', true],
    ['False', false],
    ['yes', true],
    ['NO', false],
    ['1', true],
    ['0', false],
    [true, true],
  ])('%p reads as %p', (input, expected) => {
    expect(toBoolean(input, 'Completed')).toBe(expected);
  });

  test('anything else is refused', () => {
    expect(messageOf(() => toBoolean('maybe', 'Completed'))).toMatch(/Completed must be true or false/);
  });
});

describe('date-times', () => {
  test('an ISO date-time with an offset is kept, in the colon form the contract accepts', () => {
    expect(toDateTime('2026-03-01T09:30:00-05:00', 'Due')).toBe('2026-03-01T09:30:00-05:00');
    expect(toDateTime('2026-03-01T09:30:00+0100', 'Due')).toBe('2026-03-01T09:30:00+01:00');
  });

  test('a date or a date-time without offset is read as UTC', () => {
    expect(toDateTime('2026-03-05', 'Due')).toBe('2026-03-05T00:00:00.000Z');
    expect(toDateTime('2026-03-05 14:00', 'Due')).toBe('2026-03-05T14:00:00.000Z');
  });

  test('Unix timestamps in seconds or milliseconds are accepted', () => {
    expect(toDateTime(1772357400, 'Due')).toBe('2026-03-01T09:30:00.000Z');
    expect(toDateTime('1772357400000', 'Due')).toBe('2026-03-01T09:30:00.000Z');
  });

  test('text that is not a date is refused', () => {
    expect(messageOf(() => toDateTime('next someday', 'Due'))).toMatch(/Due must be a date and time/);
  });

  test('a date keeps the day the user picked, in its own time zone', () => {
    expect(toDate('2026-03-01T23:30:00-05:00', 'Due on')).toBe('2026-03-01');
    expect(toDate('2026-03-01', 'Due on')).toBe('2026-03-01');
    expect(messageOf(() => toDate('soon', 'Due on'))).toMatch(/Due on must be a date, e.g. 2026-03-01/);
  });
});

describe('choices', () => {
  test('labels and spacing are matched to the contract values', () => {
    expect(toChoice('High', TASK_PRIORITIES, 'Priority')).toBe('high');
    expect(toChoice('Follow up', TASK_TYPES, 'Task Type')).toBe('follow_up');
    expect(toChoice('to-do', TASK_TYPES, 'Task Type')).toBe('to_do');
  });

  test('an unknown value is passed on as given, for the contract check to report', () => {
    expect(toChoice(' critical ', TASK_PRIORITIES, 'Priority')).toBe('critical');
  });
});
