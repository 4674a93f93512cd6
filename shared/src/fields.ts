/**
 * Building blocks for the contract schemas: one field each, with messages a no-code user can act on.
 * The messages end up verbatim in problem-details `errors[].message` (CONTRACT "Errors"), so each one
 * names the field and says what to send instead.
 * Internal to the package (not re-exported from index.ts): the exported schemas are the contract.
 */
import { z } from "zod";
import { INT_MAX, LONG_TEXT_MAX, NAME_MAX, URL_MAX } from "./limits";
import { NUL_FREE_PATTERN, nulFreeMessage } from "./query-params";

/** The issue data our message functions read. */
type IssueInput = { readonly input?: unknown };

/** "x is required." when the field is absent, otherwise "x must be <expected>." */
function typeMessage(field: string, expected: string): (iss: IssueInput) => string {
  return (iss) => (iss.input === undefined ? `${field} is required.` : `${field} must be ${expected}.`);
}

/** A non-empty string of 1..max characters (names, titles, identifiers), without U+0000 (CONTRACT "HTTP semantics"). */
export function textField(field: string, max: number = NAME_MAX) {
  return z
    .string({ error: typeMessage(field, "text") })
    .min(1, { error: `${field} must not be empty.` })
    .max(max, { error: `${field} must be at most ${max} characters.` })
    .regex(NUL_FREE_PATTERN, { error: nulFreeMessage(field) });
}

/** An identifier: a non-empty string of at most 255 characters, without U+0000. */
export function idField(field: string) {
  return z
    .string({ error: typeMessage(field, "an ID (text)") })
    .min(1, { error: `${field} must not be empty.` })
    .max(NAME_MAX, { error: `${field} must be at most ${NAME_MAX} characters.` })
    .regex(NUL_FREE_PATTERN, { error: nulFreeMessage(field) });
}

/** Free text that may be empty, up to `max` characters (descriptions, notes), without U+0000. */
export function longTextField(field: string, max: number = LONG_TEXT_MAX) {
  return z
    .string({ error: typeMessage(field, "text") })
    .max(max, { error: `${field} must be at most ${max} characters.` })
    .regex(NUL_FREE_PATTERN, { error: nulFreeMessage(field) });
}

/** Earliest and latest years a date-time may name: what PostgreSQL timestamps and ISO 8601 four-digit years both hold. */
const YEAR_RANGE = { min: 1, max: 9999 } as const;

/** An ISO 8601 date-time that names its offset (`Z` or `+hh:mm`), in the years 0001..9999 (UTC). */
export function dateTimeField(field: string) {
  return z.iso
    .datetime({
      offset: true,
      error: typeMessage(field, "an ISO 8601 date-time with a time zone, e.g. 2026-03-01T09:30:00Z or 2026-03-01T09:30:00+01:00"),
    })
    .refine(
      (value) => {
        const instant = new Date(value);
        if (Number.isNaN(instant.getTime())) return true; // not a date-time at all: the format check reports it once
        const year = instant.getUTCFullYear();
        return year >= YEAR_RANGE.min && year <= YEAR_RANGE.max;
      },
      { error: `${field} must be a date-time in the years 0001 to 9999.` },
    );
}

/**
 * Quotes at most `max` of `values` for a message, e.g. `"a", "b", "c" and 2,997 more`, so a message about thousands of
 * unknown keys stays short (issue 12: every error body is bounded).
 */
export function quoteSome(values: readonly string[], max = 3): string {
  const shown = values.slice(0, max).map((v) => JSON.stringify(v)).join(", ");
  return values.length > max ? `${shown} and ${(values.length - max).toLocaleString("en-US")} more` : shown;
}

/** A whole number within [min, max]. */
export function wholeNumberField(field: string, min: number, max: number = INT_MAX) {
  const range = max === INT_MAX ? `${min} or more` : `from ${min} to ${max}`;
  const message = `${field} must be a whole number ${range}.`;
  return z
    .number({ error: typeMessage(field, `a whole number ${range}`) })
    .int({ error: message })
    .min(min, { error: message })
    .max(max, { error: max === INT_MAX ? `${field} is too large.` : message });
}

/** A JSON boolean (`true` or `false`). */
export function booleanField(field: string) {
  return z.boolean({ error: typeMessage(field, "true or false") });
}

/** One of a fixed list of strings. */
export function enumField<const T extends readonly [string, ...string[]]>(field: string, values: T) {
  return z.enum(values, {
    error: (iss) =>
      iss.input === undefined ? `${field} is required.` : `${field} must be one of: ${values.join(", ")}.`,
  });
}

/** An absolute http(s) URL of at most URL_MAX characters. */
export function httpUrlField(field: string) {
  return z
    .url({ protocol: /^https?$/, error: typeMessage(field, "a full URL starting with https://") })
    .max(URL_MAX, { error: `${field} must be at most ${URL_MAX} characters.` });
}

/** A string-keyed JSON object of arbitrary values (no string in it may contain U+0000: the server refuses the body). */
export function recordField(field: string) {
  return z
    .record(z.string(), z.unknown(), {
      error: typeMessage(field, 'an object of values keyed by field name, e.g. {"email": "ada@example.com"}'),
    })
    .meta({ description: "Values keyed by field name. No string in it, key or value, may contain U+0000." });
}

/**
 * A request body object that rejects unknown top-level fields (a 400 listing them and the allowed ones),
 * and says so plainly when the body is not a JSON object at all.
 */
export function strictBody<T extends z.core.$ZodLooseShape>(shape: T) {
  const allowed = Object.keys(shape).join(", ");
  return z.strictObject(shape, {
    error: (iss) => {
      if (iss.code === "unrecognized_keys") {
        const keys = quoteSome(iss.keys);
        const [noun, pronoun] = iss.keys.length === 1 ? ["field", "it"] : ["fields", "them"];
        return `Unknown ${noun} ${keys}. Remove ${pronoun} or check the spelling; allowed fields: ${allowed}.`;
      }
      if (iss.code === "invalid_type") return "The request body must be a JSON object.";
      return undefined;
    },
  });
}

/** Refinement predicate for update bodies: at least one field is present. */
export function hasAnyField(value: Record<string, unknown>): boolean {
  return Object.values(value).some((v) => v !== undefined);
}

/** Message of the "at least one field" refinement of update bodies. */
export const AT_LEAST_ONE_FIELD_MESSAGE = "Provide at least one field to change.";
