/**
 * A contract zod schema as the MCP SDK takes it (Standard Schema with JSON Schema, standardschema.dev): validation is
 * zod's own; the JSON Schema is zod's `toJSONSchema` of the same schema, made compact for a model's context window
 * (MCP "Tools", `inputSchema`/`outputSchema`):
 * - a `date-time` string keeps `format` and loses zod's 400-character `pattern` (the format says the same to a model,
 *   and the zod schema still checks every argument), and so does the no-NUL `pattern` of every text field (CONTRACT
 *   "HTTP semantics" states that rule for the whole API);
 * - `anyOf: [{ type: T, ... }, { type: "null" }]` is written `type: [T, "null"]` (the same set of values);
 * - the `$schema` keyword is left out (MCP's default dialect is JSON Schema 2020-12, the target used here);
 * - the ±(2^53 - 1) bounds zod writes for every `.int()` are left out (JSON's safe-integer range: nothing a model can
 *   use), and so is the 2^31 - 1 ceiling of the 32-bit counters (`version`, minutes: the column's size, no value an
 *   agent writes comes near it); `additionalProperties: {}` and a record's `propertyNames: { type: "string" }` are
 *   left out too (the same as no keyword: JSON object keys are always strings);
 * - in arguments, an id's (`*_id`, `after`) 1..255 length and a cursor's 1..1024: the model copies these from earlier
 *   results, the bounds tell it nothing (zod still checks them); likewise the bounds of `fields` and of its names
 *   (field names, copied from the output schema);
 * - in results, `additionalProperties: false`: CONTRACT "Versioning" lets responses gain fields (clients must ignore
 *   the ones they do not know), so an output schema must not say no other field can come (a client validating a
 *   result against a tools/list it cached earlier would refuse a new field), and a date-time's `format`: in JSON
 *   Schema 2020-12 `format` is an annotation, not an assertion, and a result's timestamps read as what they are
 *   (arguments keep it: there it tells the model what to write).
 * So the shape exists once, in `@stageline/shared`, and the tool definitions only point at it.
 */
import { z } from "zod";
import { INT_MAX, NUL_FREE_PATTERN } from "@stageline/shared";
import type { StandardSchemaWithJSON } from "@modelcontextprotocol/server";

type JsonObject = Record<string, unknown>;

/** JSON's safe-integer bounds, which zod writes for every `.int()`, and the 32-bit counters' ceiling (`INT_MAX`). */
const SAFE_INTEGER_BOUNDS = new Set([Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, INT_MAX]);

/** Argument names whose values the model copies from earlier results (ids, cursors): their lengths say nothing. */
const COPIED_VALUE = /(^|_)id$|^(cursor|after)$/;

/** Array arguments whose elements the model copies from a schema (field names): their bounds say nothing. */
const COPIED_LIST = /^fields$/;

/** Compacts one rendered node and everything below it, in place (see the module comment). */
function compact(node: unknown, io: "input" | "output"): void {
  if (Array.isArray(node)) return node.forEach((child) => compact(child, io));
  if (node === null || typeof node !== "object") return;
  const n = node as JsonObject;
  for (const value of Object.values(n)) compact(value, io);
  if (n.format === "date-time" || n.pattern === NUL_FREE_PATTERN.source) delete n.pattern;
  if (io === "output" && n.format === "date-time") delete n.format;
  if (SAFE_INTEGER_BOUNDS.has(n.minimum as number)) delete n.minimum;
  if (SAFE_INTEGER_BOUNDS.has(n.maximum as number)) delete n.maximum;
  const extra = n.additionalProperties;
  if ((io === "output" && extra === false) || (typeof extra === "object" && extra !== null && Object.keys(extra).length === 0)) {
    delete n.additionalProperties;
  }
  const names = n.propertyNames as JsonObject | undefined;
  if (names && names.type === "string" && Object.keys(names).length === 1) delete n.propertyNames;
  if (io === "input" && n.properties && typeof n.properties === "object") {
    for (const [name, property] of Object.entries(n.properties as Record<string, JsonObject>)) {
      if (COPIED_VALUE.test(name) && property.type !== "array") {
        delete property.minLength;
        delete property.maxLength;
      }
      if (COPIED_LIST.test(name) && property.type === "array") {
        delete property.minItems;
        delete property.maxItems;
        const element = property.items as JsonObject | undefined;
        delete element?.minLength;
        delete element?.maxLength;
      }
    }
  }
  const anyOf = n.anyOf;
  if (Array.isArray(anyOf) && anyOf.length === 2) {
    const [a, b] = anyOf as JsonObject[];
    const isNull = (s: JsonObject | undefined) => s !== undefined && s.type === "null" && Object.keys(s).length === 1;
    const other = isNull(b) ? a : isNull(a) ? b : undefined;
    if (other && typeof other.type === "string" && other.enum === undefined && other.const === undefined) {
      delete n.anyOf;
      Object.assign(n, other, { type: [other.type, "null"] });
    }
  }
}

/**
 * The JSON Schema of `schema` as a tool advertises it: 2020-12, compact (see the module comment).
 * @param io `input` for arguments (defaults optional), `output` for results.
 */
export function toolJsonSchema(schema: z.ZodType, io: "input" | "output"): JsonObject {
  const json = z.toJSONSchema(schema, { target: "draft-2020-12", io, unrepresentable: "any" }) as JsonObject;
  delete json.$schema;
  compact(json, io);
  return json;
}

/** A compiled JSON Schema check: the SDK's `JsonSchemaValidator` result shape. */
type JsonSchemaCheck = (value: unknown) => { valid: true; data: unknown } | { valid: false; errorMessage: string };

/**
 * The SDK's own JSON Schema validator (ajv, bundled inside the SDK: 2020-12, `strict: false`, the standard formats),
 * the one its clients validate `structuredContent` with. Required by path: the repository's "node" module resolution
 * reads no `exports` map for types (the SDK exports it as `@modelcontextprotocol/server/validators/ajv`).
 */
let validatorProvider: { getValidator(schema: JsonObject): JsonSchemaCheck } | undefined;
function outputValidator(json: JsonObject): JsonSchemaCheck {
  if (!validatorProvider) {
    const { AjvJsonSchemaValidator } = require("@modelcontextprotocol/server/validators/ajv") as {
      AjvJsonSchemaValidator: new () => { getValidator(schema: JsonObject): JsonSchemaCheck };
    };
    validatorProvider = new AjvJsonSchemaValidator();
  }
  return validatorProvider.getValidator(json);
}

/** One wrapper per schema for the process: a server is built per HTTP request, its schemas are rendered once. */
const wrappers = new WeakMap<z.ZodType, StandardSchemaWithJSON<unknown, unknown>>();

/** zod's verdict on `value` as a Standard Schema result. */
function zodResult<T extends z.ZodType>(schema: T, value: unknown): { value: z.output<T> } | { issues: { message: string; path: PropertyKey[] }[] } {
  const result = schema.safeParse(value);
  return result.success
    ? { value: result.data as z.output<T> }
    : { issues: result.error.issues.map((issue) => ({ message: issue.message, path: issue.path })) };
}

/**
 * Wraps a zod schema for `McpServer.registerTool`: zod validates, `toolJsonSchema` renders (computed once per schema
 * and io for the whole process, since tools/list and, in the 2026-07-28 revision, every tools/call ask for it).
 * With `check: "output"` (a tool's `outputSchema`, which the SDK checks every result against) the check is the
 * advertised output JSON Schema itself, compiled once by the SDK's ajv validator: what an MCP client validates
 * `structuredContent` against. On a `list_items` page of 100 items it takes 0.12 ms at p50 where zod's parse took
 * 0.19 ms (issue 33; bench/results/issue33-mcp.md). Only a value it refuses goes through zod too, for zod's messages.
 * The SDK uses a result's verdict only (its `value` is not passed on), so the value is returned as given.
 */
export function toolSchema<T extends z.ZodType>(schema: T, check: "input" | "output" = "input"): StandardSchemaWithJSON<z.input<T>, z.output<T>> {
  const key = check === "output" ? outputWrappers : wrappers;
  const cached = key.get(schema);
  if (cached) return cached as StandardSchemaWithJSON<z.input<T>, z.output<T>>;
  const rendered: Partial<Record<"input" | "output", JsonObject>> = {};
  const render = (io: "input" | "output") => (rendered[io] ??= toolJsonSchema(schema, io));
  let compiled: JsonSchemaCheck | undefined;
  const validate =
    check === "input"
      ? (value: unknown) => zodResult(schema, value)
      : (value: unknown) => {
          compiled ??= outputValidator(render("output"));
          const checked = compiled(value);
          if (checked.valid) return { value: value as z.output<T> };
          const fromZod = zodResult(schema, value);
          return "issues" in fromZod ? fromZod : { issues: [{ message: checked.errorMessage }] };
        };
  const wrapper: StandardSchemaWithJSON<z.input<T>, z.output<T>> = {
    "~standard": {
      version: 1,
      vendor: "stageline",
      validate,
      jsonSchema: { input: () => render("input"), output: () => render("output") },
    },
  };
  key.set(schema, wrapper as StandardSchemaWithJSON<unknown, unknown>);
  return wrapper;
}

/** The output-check wrappers (`toolSchema(schema, "output")`), one per schema for the process. */
const outputWrappers = new WeakMap<z.ZodType, StandardSchemaWithJSON<unknown, unknown>>();
