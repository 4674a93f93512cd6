/**
 * CONTRACT "HTTP semantics" (issue 21, gaps 1-3): the OpenAPI document states every rule the server applies, so a
 * client generated from it never sends what the server refuses, and what the server accepts the document allows.
 * - Every query parameter: the document's schema (Ajv, JSON Schema 2020-12) accepts a value exactly when the contract
 *   schema the server parses it with does (property-based, fast-check): trimming, blank = absent, lengths after trimming.
 * - PATCH bodies: `minProperties: 1`; every request string states "no U+0000" (a pattern, format or enum without it).
 * - The subscribe `event` is the enum of event names; cursors are described as opaque.
 * No server: the document and the contract schemas are compared directly.
 */
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import fc from "fast-check";
import { z } from "zod";
import { EVENT_NAMES, integerRangePattern } from "@stageline/shared";
import { openApiDocument } from "../src/openapi/document";
import { API_OPERATIONS } from "../src/openapi/operations";

type Json = Record<string, any>;
const doc = openApiDocument() as unknown as Json;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);

/** Characters that exercise the rules: whitespace of every kind `trim` removes, NUL, and parts of ids, dates, numbers. */
const ALPHABET = [" ", "\t", "\n", "\u00a0", "\u2003", "\ufeff", "\u0000", "a", "Z", "-", ".", ":", "0", "1", "2", "5", "9", "T", "x", "é"];
const fragments = fc.constantFrom(
  ...ALPHABET,
  "2026-03-01T09:30:00Z",
  "2026-02-30T00:00:00Z",
  "true",
  "false",
  "pending",
  "500",
  "501",
  "0x10",
  "1e2",
);
const queryValue = fc.oneof(
  fc.array(fragments, { maxLength: 6 }).map((parts) => parts.join("")),
  fc.tuple(fc.constantFrom(" ", "", "\t"), fc.string({ minLength: 0, maxLength: 120 }), fc.constantFrom(" ", "")).map(([a, b, c]) => a + b + c),
);

describe("query parameters: the document accepts a value exactly when the server does", () => {
  const cases = API_OPERATIONS.filter((op) => op.query).flatMap((op) =>
    Object.keys(op.query!.shape).map((name) => ({ op, name })),
  );

  it.each(cases.map((c) => [`${c.op.operationId} ?${c.name}`, c] as const))("%s", (_label, { op, name }) => {
    const param = (doc.paths[op.path][op.method].parameters as Json[]).find((p) => p.in === "query" && p.name === name)!;
    const validate = ajv.compile(param.schema);
    const serverSchema = z.object({ [name]: op.query!.shape[name] as z.ZodType });
    fc.assert(
      fc.property(queryValue, (value) => {
        const server = serverSchema.safeParse({ [name]: value }).success;
        // An integer parameter travels as its decimal text: the document's integer branch accepts the number it names.
        const candidate = param.schema.anyOf?.[0]?.type === "integer" && /^\d+$/.test(value) ? Number(value) : value;
        const documented = validate(candidate) || validate(value);
        if (server !== documented) throw new Error(`?${name}=${JSON.stringify(value)}: server ${server ? "accepts" : "refuses"}, document ${documented ? "accepts" : "refuses"}`);
      }),
      { numRuns: 400 },
    );
  });

  it("gap 3 as reported: ?q=%20a, ?created_after= and ?pipeline_id= agree with the document", () => {
    const params = doc.paths["/v1/ext/items"].get.parameters as Json[];
    const schemaOf = (n: string) => ajv.compile(params.find((p) => p.name === n)!.schema);
    expect(schemaOf("q")(" a")).toBe(false);
    expect(schemaOf("q")(" ab ")).toBe(true);
    expect(schemaOf("created_after")("")).toBe(true);
    expect(schemaOf("pipeline_id")("")).toBe(true);
  });

  it("integerRangePattern matches exactly min..max with optional leading zeros", () => {
    for (const [min, max] of [[1, 500], [0, 9], [1, 1], [1, 100], [1, 2000]] as const) {
      const re = new RegExp(`^${integerRangePattern(min, max)}$`);
      for (let n = 0; n <= max + 20; n++) {
        for (const text of [String(n), `00${n}`]) expect({ text, ok: re.test(text) }).toEqual({ text, ok: n >= min && n <= max });
      }
    }
  });
});

/** Every schema of a request (parameters and bodies), with where it sits. */
function requestSchemas(): { where: string; schema: Json }[] {
  const out: { where: string; schema: Json }[] = [];
  const walk = (schema: Json, where: string) => {
    if (!schema || typeof schema !== "object") return;
    out.push({ where, schema });
    for (const [k, v] of Object.entries(schema.properties ?? {})) walk(v as Json, `${where}.${k}`);
    for (const [i, v] of (schema.anyOf ?? []).entries()) walk(v as Json, `${where}|${i}`);
    if (schema.items) walk(schema.items, `${where}[]`);
  };
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    for (const [method, op] of Object.entries(item as Json)) {
      for (const p of (op as Json).parameters ?? []) walk(p.schema, `${method} ${path} ${p.in} ${p.name}`);
      const body = (op as Json).requestBody?.content?.["application/json"]?.schema;
      if (body) walk(body, `${method} ${path} body`);
    }
  }
  return out;
}

describe("request bodies and strings", () => {
  it("PATCH bodies need at least one field (minProperties: 1)", () => {
    for (const path of ["/v1/ext/items/{item_id}", "/v1/ext/tasks/{task_id}"]) {
      const schema = doc.paths[path].patch.requestBody.content["application/json"].schema;
      expect(schema.minProperties).toBe(1);
      expect(ajv.validate(schema, {})).toBe(false);
    }
  });

  it("no request string admits U+0000 (each has a pattern, a format or an enum that refuses it)", () => {
    const strings = requestSchemas().filter(({ schema }) => schema.type === "string");
    expect(strings.length).toBeGreaterThan(40);
    const admitting = strings.filter(({ schema }) => ajv.validate(schema, schema.enum ? `${schema.enum[0]}\u0000` : "ab\u0000cd"));
    expect(admitting.map((s) => s.where)).toEqual([]);
  });

  it("the subscribe event is the enum of event names; cursors are described as opaque", () => {
    const body = doc.paths["/v1/ext/webhooks"].post.requestBody.content["application/json"].schema;
    expect(body.properties.event.enum).toEqual([...EVENT_NAMES]);
    const cursor = (doc.paths["/v1/ext/items"].get.parameters as Json[]).find((p) => p.name === "cursor")!;
    expect(cursor.schema.description).toMatch(/Opaque/);
  });
});
