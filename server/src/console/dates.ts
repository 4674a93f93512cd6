/**
 * Times in the console: shown as `YYYY-MM-DD HH:mm UTC` everywhere (CONTRACT "Console: events, activity and
 * charts"), and taken from `datetime-local` inputs, which the console labels as UTC.
 */

/**
 * A time as the console shows it: `YYYY-MM-DD HH:mm UTC` (minutes, UTC). Given to every view as `it.date`
 * (views.ts).
 * @param time a Date or an ISO 8601 string.
 */
export function consoleDate(time: Date | string): string {
  return `${new Date(time).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/**
 * A time typed in a form as the contract's date-time: the console shows and takes times in UTC, and a
 * `datetime-local` input posts `YYYY-MM-DDTHH:MM` (seconds optional) without a zone (typed by hand, a space may
 * stand for the `T`), so `Z` is added; anything else is passed on as typed for the contract's schema to judge (a
 * full ISO 8601 time with its offset is accepted).
 */
export function utcDateTime(value: string): string {
  const local = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})(:\d{2}(\.\d{1,3})?)?$/.exec(value);
  return local ? `${local[1]}T${local[2]}${local[3] ?? ":00"}Z` : value;
}
