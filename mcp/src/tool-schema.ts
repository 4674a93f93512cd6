/**
 * A contract zod schema as the MCP SDK takes it (Standard Schema with JSON Schema, standardschema.dev): validation is
 * zod's own; the JSON Schema is zod's `toJSONSchema` of the same schema, made compact for a model's context window
 * (MCP "Tools", `inputSchema`/`outputSchema`):
 * - a `date-time` string keeps `format` and loses zod's 400-character `pattern` (the format says the same to a model,
 *   and the zod schema still checks every argument), and so does the no-NUL `pattern` of every text field (CONTRACT
 *   "HTTP semantics" states that rule for the whole API);
 * - `anyOf: [{ type: T, ... }, { type: "null" }]` is written `type: [T, "null"]` (the same set of values);
 * - the `$schema` keyword is left out (MCP's default dialect is JSON Schema 2020-12, the target used here).
 * So the shape exists once, in `@stageline/shared`, and the tool definitions only point at it.
 */
import { z } from "zod";
import { NUL_FREE_PATTERN } from "@stageline/shared";
import type { StandardSchemaWithJSON } from "@modelcontextprotocol/server";

type JsonObject = Record<string, unknown>;

/** Compacts one rendered node and everything below it, in place (see the module comment). */
function compact(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(compact);
  if (node === null || typeof node !== "object") return;
  const n = node as JsonObject;
  for (const value of Object.values(n)) compact(value);
  if (n.format === "date-time" || n.pattern === NUL_FREE_PATTERN.source) delete n.pattern;
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
  compact(json);
  return json;
}

/** One wrapper per schema for the process: a server is built per HTTP request, its schemas are rendered once. */
const wrappers = new WeakMap<z.ZodType, StandardSchemaWithJSON<unknown, unknown>>();

/**
 * Wraps a zod schema for `McpServer.registerTool`: zod validates, `toolJsonSchema` renders (computed once per schema
 * and io for the whole process, since tools/list and, in the 2026-07-28 revision, every tools/call ask for it).
 */
export function toolSchema<T extends z.ZodType>(schema: T): StandardSchemaWithJSON<z.input<T>, z.output<T>> {
  const cached = wrappers.get(schema);
  if (cached) return cached as StandardSchemaWithJSON<z.input<T>, z.output<T>>;
  const rendered: Partial<Record<"input" | "output", JsonObject>> = {};
  const render = (io: "input" | "output") => (rendered[io] ??= toolJsonSchema(schema, io));
  const wrapper: StandardSchemaWithJSON<z.input<T>, z.output<T>> = {
    "~standard": {
      version: 1,
      vendor: "stageline",
      validate: (value: unknown) => {
        const result = schema.safeParse(value);
        return result.success
          ? { value: result.data as z.output<T> }
          : { issues: result.error.issues.map((issue) => ({ message: issue.message, path: issue.path })) };
      },
      jsonSchema: { input: () => render("input"), output: () => render("output") },
    },
  };
  wrappers.set(schema, wrapper as StandardSchemaWithJSON<unknown, unknown>);
  return wrapper;
}
