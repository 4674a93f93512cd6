/**
 * The compatibility checker behind `npm run openapi:compat` (CONTRACT "Versioning and compatibility"; issue 21 part 5):
 * fed each kind of breaking change it names the change, fed each kind of additive change (and changes under a new
 * major prefix) it finds none. Then the served document against the committed baseline, and the API changelog
 * against the document's `info.version`. No server.
 */
import fs from "node:fs";
import path from "node:path";
import { BASELINE_PATH, main } from "../src/openapi/compat/cli";
import { findBreakingChanges } from "../src/openapi/compat/document-diff";
import type { BreakingKind, Json } from "../src/openapi/compat/types";
import { openApiDocument } from "../src/openapi/document";
import { API_VERSION } from "../src/openapi/operations";

/** A small v1 document with a list, a create and a component. */
function baseDoc(): Json {
  return {
    openapi: "3.1.0",
    info: { title: "t", version: "2026-11-21" },
    paths: {
      "/v1/ext/items": {
        get: {
          parameters: [
            { in: "query", name: "limit", schema: { type: "integer", minimum: 1, maximum: 500 } },
            { in: "query", name: "state", schema: { type: "string", enum: ["open", "done"] } },
          ],
          responses: {
            "200": {
              description: "ok",
              headers: { Link: { schema: { type: "string" } } },
              content: { "application/json": { schema: { type: "array", items: { $ref: "#/components/schemas/Item" } } } },
            },
            "400": { description: "bad" },
          },
        },
        post: {
          requestBody: {
            required: true,
            content: {
              "application/json": {
                schema: {
                  type: "object",
                  properties: { name: { type: "string", minLength: 1, maxLength: 255 }, note: { type: "string" }, kind: { type: "string", enum: ["a", "b"] } },
                  required: ["name"],
                  additionalProperties: false,
                },
              },
            },
          },
          responses: {
            "201": { description: "created", content: { "application/json": { schema: { $ref: "#/components/schemas/Item" } } } },
            "422": { description: "unknown reference" },
          },
        },
      },
      "/v1/ext/items/{item_id}": {
        get: {
          parameters: [{ in: "path", name: "item_id", required: true, schema: { type: "string" } }],
          responses: {
            "200": { description: "ok", content: { "application/json": { schema: { $ref: "#/components/schemas/Item" } } } },
            "404": { description: "not found" },
          },
        },
      },
    },
    components: {
      schemas: {
        Item: {
          type: "object",
          properties: {
            id: { type: "string" },
            name: { type: "string" },
            contact_id: { anyOf: [{ type: "string" }, { type: "null" }] },
            status: { type: "string", enum: ["open", "done"] },
            tags: { type: "array", items: { type: "string" } },
          },
          required: ["id", "name", "contact_id", "status"],
        },
      },
    },
  };
}

type Mutation = (d: Json) => void;
const list = (d: Json) => d.paths["/v1/ext/items"].get;
const create = (d: Json) => d.paths["/v1/ext/items"].post;
const createBody = (d: Json) => create(d).requestBody.content["application/json"].schema;
const item = (d: Json) => d.components.schemas.Item;
const getOne = (d: Json) => d.paths["/v1/ext/items/{item_id}"].get;

const BREAKING: [string, BreakingKind, Mutation][] = [
  ["removed path", "removed-path", (d) => delete d.paths["/v1/ext/items/{item_id}"]],
  ["removed operation", "removed-operation", (d) => delete d.paths["/v1/ext/items"].post],
  ["removed parameter", "removed-parameter", (d) => list(d).parameters.pop()],
  ["new required parameter", "new-required-parameter", (d) => list(d).parameters.push({ in: "query", name: "tenant", required: true, schema: { type: "string" } })],
  ["parameter becomes required", "new-required-parameter", (d) => (list(d).parameters[0].required = true)],
  ["removed enum value of a parameter", "removed-enum-value", (d) => (list(d).parameters[1].schema.enum = ["open"])],
  ["lower maximum of a parameter", "lower-limit", (d) => (list(d).parameters[0].schema.maximum = 100)],
  ["higher minimum of a parameter", "lower-limit", (d) => (list(d).parameters[0].schema.minimum = 10)],
  ["narrower parameter type", "narrower-type", (d) => (list(d).parameters[1].schema = { type: "boolean" })],
  ["new required request field", "new-required-field", (d) => createBody(d).required.push("note")],
  ["removed request field of a closed body", "removed-field", (d) => delete createBody(d).properties.note],
  ["smaller maxLength", "lower-limit", (d) => (createBody(d).properties.name.maxLength = 100)],
  ["bigger minLength", "lower-limit", (d) => (createBody(d).properties.name.minLength = 3)],
  ["new maxLength", "lower-limit", (d) => (createBody(d).properties.note.maxLength = 10)],
  ["new pattern", "changed-constraint", (d) => (createBody(d).properties.note.pattern = "^[a-z]*$")],
  ["removed request enum value", "removed-enum-value", (d) => (createBody(d).properties.kind.enum = ["a"])],
  ["request field now an enum", "narrower-type", (d) => (createBody(d).properties.note.enum = ["x"])],
  ["request now refuses unknown fields", "narrower-type", (d) => { createBody(d).additionalProperties = true; }],
  ["removed request body", "removed-request-body", (d) => delete create(d).requestBody],
  ["removed required response field", "removed-field", (d) => delete item(d).properties.name],
  ["removed optional response field", "removed-field", (d) => delete item(d).properties.tags],
  ["response field no longer required", "response-field-optional", (d) => (item(d).required = ["id", "contact_id", "status"])],
  ["response field may now be null", "wider-response-type", (d) => (item(d).properties.name = { anyOf: [{ type: "string" }, { type: "null" }] })],
  ["response field of another type", "wider-response-type", (d) => (item(d).properties.id = { type: "integer" })],
  ["removed response enum value", "removed-enum-value", (d) => (item(d).properties.status.enum = ["open"])],
  ["changed success status", "removed-success-status", (d) => { const r = create(d).responses; r["200"] = r["201"]; delete r["201"]; }],
  ["removed error status", "removed-response-status", (d) => delete list(d).responses["400"]],
  ["removed 404 of an existing operation", "removed-response-status", (d) => delete getOne(d).responses["404"]],
  ["422 answered as 400 instead", "removed-response-status", (d) => { const r = create(d).responses; r["400"] = r["422"]; delete r["422"]; }],
  ["removed response header", "removed-response-header", (d) => delete list(d).responses["200"].headers.Link],
];

/** "request now refuses unknown fields" needs a base that allowed them: the mutation runs on the base instead. */
const ON_BASE = new Set(["request now refuses unknown fields"]);

const ADDITIVE: [string, Mutation][] = [
  ["new path", (d) => (d.paths["/v1/ext/widgets"] = { get: { responses: { "200": { description: "ok" } } } })],
  ["new operation", (d) => (d.paths["/v1/ext/items/{item_id}"].delete = { responses: { "204": { description: "gone" } } })],
  ["new optional parameter", (d) => list(d).parameters.push({ in: "query", name: "q", schema: { type: "string", minLength: 2 } })],
  ["new optional request field", (d) => (createBody(d).properties.source = { type: "string", maxLength: 20 })],
  ["new response field", (d) => (item(d).properties.created_at = { type: "string", format: "date-time" })],
  ["new response enum value", (d) => item(d).properties.status.enum.push("archived")],
  ["new request enum value", (d) => createBody(d).properties.kind.enum.push("c")],
  ["higher maxLength", (d) => (createBody(d).properties.name.maxLength = 1000)],
  ["lower minimum of a parameter", (d) => (list(d).parameters[0].schema.minimum = 0)],
  ["request field now optional", (d) => (createBody(d).required = [])],
  ["request field may now be null", (d) => (createBody(d).properties.note = { anyOf: [{ type: "string" }, { type: "null" }] })],
  ["new error status", (d) => (create(d).responses["409"] = { description: "conflict" })],
  ["new response header", (d) => (list(d).responses["200"].headers.Deprecation = { schema: { type: "string" } })],
  ["descriptions and examples", (d) => { create(d).description = "x"; item(d).properties.id.example = "abc"; }],
  ["a new major prefix, and a v2 path that differs", (d) => (d.paths["/v2/ext/items"] = { get: { responses: { "200": { description: "other" } } } })],
];

describe("findBreakingChanges", () => {
  it("finds nothing between a document and itself", () => {
    expect(findBreakingChanges(baseDoc(), baseDoc())).toEqual([]);
  });

  it.each(BREAKING)("names a breaking change: %s (%s)", (label, kind, mutate) => {
    const base = baseDoc();
    const head = baseDoc();
    mutate(ON_BASE.has(label) ? base : head);
    const changes = findBreakingChanges(base, head);
    expect(changes.map((c) => c.kind)).toContain(kind);
    for (const c of changes) expect(c.where).toMatch(/\/v1\/ext\//);
  });

  it.each(ADDITIVE)("finds nothing for an additive change: %s", (_label, mutate) => {
    const head = baseDoc();
    mutate(head);
    expect(findBreakingChanges(baseDoc(), head)).toEqual([]);
  });

  it("does not compare the paths of another major prefix of the baseline", () => {
    const base = baseDoc();
    base.paths["/v2/ext/items"] = { get: { responses: { "200": { description: "ok" } } } };
    expect(findBreakingChanges(base, baseDoc())).toEqual([]);
  });

  it("ends on recursive schemas", () => {
    const base = baseDoc();
    item(base).properties.parent = { $ref: "#/components/schemas/Item" };
    expect(findBreakingChanges(base, structuredClone(base))).toEqual([]);
  });
});

describe("the served document and its baseline", () => {
  it("is compatible with docs/api/openapi.v1.baseline.json (what npm run openapi:compat checks)", () => {
    const baseline = JSON.parse(fs.readFileSync(BASELINE_PATH, "utf8")) as Json;
    expect(findBreakingChanges(baseline, openApiDocument() as unknown as Json)).toEqual([]);
  });

  it("the CLI exits 1 naming each change against a broken baseline, 0 against the real one", () => {
    const write = jest.spyOn(process.stdout, "write").mockImplementation(() => true);
    try {
      expect(main([])).toBe(0);
      const original = fs.readFileSync(BASELINE_PATH, "utf8");
      const broken = JSON.parse(original) as Json;
      broken.paths["/v1/ext/gone"] = { get: { responses: { "200": { description: "ok" } } } };
      const spy = jest.spyOn(fs, "readFileSync").mockReturnValueOnce(JSON.stringify(broken));
      expect(main([])).toBe(1);
      spy.mockRestore();
      expect(write.mock.calls.map((c) => String(c[0])).join("")).toMatch(/BREAKING removed-path at \/v1\/ext\/gone/);
    } finally {
      write.mockRestore();
    }
  });
});

describe("docs/api/CHANGELOG.md", () => {
  const text = fs.readFileSync(path.join(__dirname, "..", "..", "docs", "api", "CHANGELOG.md"), "utf8");
  const dates = [...text.matchAll(/^## (\d{4}-\d{2}-\d{2})\s*$/gm)].map((m) => m[1]!);

  it("has dated entries, newest first, and the document's info.version is the newest date", () => {
    expect(dates.length).toBeGreaterThanOrEqual(2);
    expect([...dates].sort().reverse()).toEqual(dates);
    expect(new Set(dates).size).toBe(dates.length);
    expect(API_VERSION).toBe(dates[0]);
    expect((openApiDocument() as unknown as Json).info.version).toBe(dates[0]);
  });
});
