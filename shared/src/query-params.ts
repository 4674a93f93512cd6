/**
 * Query parameters (CONTRACT "HTTP semantics"): every query value is trimmed, and a blank value counts as absent
 * (integration platforms send blank optional fields as empty strings); lengths are counted after trimming. No string
 * may contain U+0000.
 *
 * Each wrapper here holds the parse rule and its statement in the OpenAPI document side by side, so they cannot
 * drift: the parameter's schema becomes `anyOf: [canonical, tolerated]`, where `canonical` is the value a client
 * should send (the inner schema, with no surrounding whitespace) and `tolerated` is a string `pattern` matching
 * exactly what the server also accepts: the canonical value padded with whitespace, or only whitespace (absent).
 * The `override` meta is applied by zod-openapi when server/src/openapi/document.ts renders the document.
 */
import { z } from "zod";

/**
 * The characters `String.prototype.trim` removes (ECMAScript WhiteSpace and LineTerminator), as the body of a regex
 * character class spelled with escapes only, so JSON Schema tools of any regex dialect read it the same way.
 */
const TRIMMED_CHARS = "\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff";

/** CONTRACT "HTTP semantics": no string may contain U+0000 (PostgreSQL text cannot hold it). */
export const NUL_FREE_PATTERN = /^[^\u0000]*$/;

/** The message of a string that contains U+0000. */
export function nulFreeMessage(field: string): string {
  return `${field} must not contain the NUL character (\\u0000).`;
}

/** A query value as the server reads it: strings trimmed, blank ones absent (`undefined`); other values as they are. */
export function normalizeQueryValue(value: unknown): unknown {
  if (typeof value !== "string") return value;
  const trimmed = value.trim();
  return trimmed === "" ? undefined : trimmed;
}

/** Escapes `text` for use inside a regex. */
function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * A regex (no anchors) of the decimal numbers `min..max` with optional leading zeros, for `0 <= min <= 1 <= max`.
 * @throws Error for other ranges (no query parameter needs them).
 */
export function integerRangePattern(min: number, max: number): string {
  if (min < 0 || min > 1 || max < 1 || !Number.isInteger(max)) throw new Error(`integerRangePattern: unsupported range ${min}..${max}`);
  const digits = String(max);
  const alternatives: string[] = [];
  // Numbers with fewer digits than max: 1..9, 10..99, ...
  for (let length = 1; length < digits.length; length++) alternatives.push(length === 1 ? "[1-9]" : `[1-9][0-9]{${length - 1}}`);
  // Numbers with as many digits as max, digit by digit: a smaller digit at position i, then anything.
  for (let i = 0; i < digits.length; i++) {
    const d = Number(digits[i]);
    const lowest = i === 0 ? 1 : 0;
    if (d > lowest) {
      const rest = digits.length - i - 1;
      alternatives.push(`${digits.slice(0, i)}[${lowest}-${d - 1}]${rest ? `[0-9]{${rest}}` : ""}`);
    }
  }
  alternatives.push(digits);
  return `0*(?:${min === 0 ? "0|" : ""}${alternatives.join("|")})`;
}

type JsonSchema = Record<string, unknown>;

/** The rule as the document states it on every query parameter. */
const QUERY_RULE = "Trimmed; a blank value counts as absent; lengths count after trimming.";

/** The regex (no anchors) of the trimmed, non-blank values the rendered `canonical` schema accepts. */
function canonicalCore(canonical: JsonSchema): string {
  if (Array.isArray(canonical.enum)) return `(?:${canonical.enum.map((v) => escapeRegex(String(v))).join("|")})`;
  if (canonical.type === "integer") {
    return integerRangePattern(Number(canonical.minimum ?? 0), Number(canonical.maximum ?? Number.MAX_SAFE_INTEGER));
  }
  if (canonical.type !== "string") throw new Error(`query parameter of type ${String(canonical.type)} has no tolerated form`);
  const pattern = canonical.pattern;
  if (typeof pattern === "string" && pattern !== NUL_FREE_PATTERN.source) {
    // A format pattern (date-time): it admits no whitespace or NUL; its anchors go, the padding takes their place.
    if (canonical.minLength !== undefined || canonical.maxLength !== undefined) throw new Error("pattern with length limits");
    return `(?:${pattern.replace(/^\^/, "").replace(/\$$/, "")})`;
  }
  const min = Math.max(Number(canonical.minLength ?? 1), 1);
  const max = canonical.maxLength === undefined ? undefined : Number(canonical.maxLength);
  const edge = `[^${TRIMMED_CHARS}\\u0000]`;
  const inner = "[^\\u0000]";
  if (max === 1) return edge;
  const count = `{${Math.max(min - 2, 0)},${max === undefined ? "" : max - 2}}`;
  return min <= 1 ? `${edge}(?:${inner}${count}${edge})?` : `${edge}${inner}${count}${edge}`;
}

/**
 * zod-openapi `override` of a query parameter: rewrites its rendered schema `{...canonical}` in place as
 * `{ anyOf: [canonical, tolerated], default?, description }` (see the module comment). A canonical string without a
 * format pattern gets a pattern that admits no surrounding whitespace and no NUL, so its lengths are exact.
 */
export function statesQueryTrimming({ jsonSchema }: { jsonSchema: JsonSchema }): void {
  const canonical: JsonSchema = { ...jsonSchema };
  const { default: defaultValue, description } = canonical;
  delete canonical.default;
  delete canonical.description;
  const core = canonicalCore(canonical);
  if (canonical.type === "string" && !Array.isArray(canonical.enum) && (canonical.pattern === undefined || canonical.pattern === NUL_FREE_PATTERN.source)) {
    canonical.pattern = `^${core}$`;
  }
  const padding = `[${TRIMMED_CHARS}]*`;
  const tolerated = {
    type: "string",
    pattern: `^${padding}(?:${core})?${padding}$`,
    description: "The same value with surrounding whitespace, or only whitespace (counts as absent).",
  };
  for (const key of Object.keys(jsonSchema)) delete jsonSchema[key];
  Object.assign(jsonSchema, {
    description: [description, QUERY_RULE].filter((d) => d !== undefined).join(" "),
    anyOf: [canonical, tolerated],
    ...(defaultValue === undefined ? {} : { default: defaultValue }),
  });
}

/**
 * A query parameter: the value is trimmed and a blank value is absent before `schema` parses it.
 * `schema` should be optional (or have a default). The document states the rule (see {@link statesQueryTrimming}).
 */
export function queryParam<T extends z.ZodType>(schema: T) {
  return z.preprocess(normalizeQueryValue, schema).meta({ override: statesQueryTrimming });
}

/**
 * Every field of `shape` as a query parameter (`queryParam`), keys and order kept. A list's filters are defined once
 * as plain fields (what the MCP tools take as JSON arguments) and read from a query string through this.
 */
export function queryParams<S extends Record<string, z.ZodType>>(shape: S): { [K in keyof S]: ReturnType<typeof queryParam<S[K]>> } {
  const out: Record<string, z.ZodType> = {};
  for (const [key, schema] of Object.entries(shape)) out[key] = queryParam(schema);
  return out as { [K in keyof S]: ReturnType<typeof queryParam<S[K]>> };
}

/**
 * A whole-number query parameter: trimmed, blank is absent, and only plain decimal digits count as a number (so
 * `0x10`, `1e2` or `5.0`, which `Number()` would accept, are refused, as the document's pattern says).
 * `schema` is a `z.number()` schema (int, range, default).
 */
export function integerQueryParam<T extends z.ZodType>(schema: T) {
  return z
    .preprocess((value) => {
      const normalized = normalizeQueryValue(value);
      return typeof normalized === "string" && /^\d+$/.test(normalized) ? Number(normalized) : normalized;
    }, schema)
    .meta({ override: statesQueryTrimming });
}
