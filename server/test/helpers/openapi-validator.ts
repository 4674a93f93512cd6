/**
 * Validates API responses against the OpenAPI document (server/src/openapi/document.ts), so the document cannot lie:
 * test-server.ts's `request()` runs every response the API tests receive through `assertDocumentedResponse`.
 *
 * The response is matched to its operation by method and path template; its status must be one the operation
 * documents; its body is validated by Ajv (JSON Schema 2020-12, the dialect of OpenAPI 3.1, with ajv-formats) against
 * the documented schema of its media type; every documented required header must be present and every documented
 * header present must match its schema. A response to a path the document does not describe must be a 4xx problem;
 * to a documented path with a method it does not list, a 405 problem with `Allow`. Paths outside `/v1/ext` (admin API, /docs, /health) are not checked.
 */
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { API_BASE_PATH, PROBLEM_CONTENT_TYPE, ProblemSchema } from "@stageline/shared";
import { openApiDocument } from "../../src/openapi/document";
import type { ApiOperation } from "../../src/openapi/operations";
import { buildRouteTable, type RouteTable } from "../../src/openapi/route-table";

type Json = Record<string, any>;

/** One received response, as the test helpers see it. */
export interface ReceivedResponse {
  method: string;
  /** Request path with its query, e.g. `/v1/ext/items?limit=2`. */
  url: string;
  status: number;
  headers: Headers;
  /** The parsed JSON body (or the raw text when not JSON, undefined when empty). */
  body: unknown;
}

let state: { doc: Json; ajv: Ajv2020; table: RouteTable } | undefined;
const validators = new Map<string, ValidateFunction>();

function init() {
  if (state) return state;
  const doc = openApiDocument() as unknown as Json;
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  addFormats(ajv);
  ajv.addSchema(doc, "openapi");
  // The document's own paths, matched as the server matches them (a literal segment before a parameter).
  const operations = Object.entries(doc.paths as Json).flatMap(([path, item]) =>
    Object.keys(item as Json).map((method) => ({ path, method }) as ApiOperation),
  );
  state = { doc, ajv, table: buildRouteTable(operations) };
  return state;
}

function pointerOf(...segments: string[]): string {
  return segments.map((s) => s.replace(/~/g, "~0").replace(/\//g, "~1")).join("/");
}

/** Follows a local `$ref` of a non-schema object (response, header). */
function deref(doc: Json, obj: Json): { value: Json; pointer: string | undefined } {
  if (typeof obj?.$ref !== "string") return { value: obj, pointer: undefined };
  const pointer = obj.$ref.slice(1);
  let value: any = doc;
  for (const seg of pointer.split("/").slice(1)) value = value[seg.replace(/~1/g, "/").replace(/~0/g, "~")];
  return { value, pointer };
}

function validatorFor(pointer: string): ValidateFunction {
  const { ajv } = init();
  let v = validators.get(pointer);
  if (!v) {
    v = ajv.compile({ $ref: `openapi#${pointer}` });
    validators.set(pointer, v);
  }
  return v;
}

/** The documented path template `path` names, and its operation for `method` (absent when the path does not support it). */
function findOperation(method: string, path: string): { template: string; operation: Json | undefined } | undefined {
  const { doc, table } = init();
  const entry = table.match(path);
  return entry ? { template: entry.template, operation: doc.paths[entry.template][method] } : undefined;
}

function fail(res: ReceivedResponse, why: string): never {
  const body = typeof res.body === "string" ? res.body : JSON.stringify(res.body);
  throw new Error(`Response does not match the OpenAPI document: ${res.method} ${res.url} -> ${res.status}: ${why}\nbody: ${String(body).slice(0, 800)}`);
}

function checkHeader(res: ReceivedResponse, name: string, header: Json, pointer: string): void {
  const value = res.headers.get(name);
  if (value === null) {
    if (header.required) fail(res, `required header ${name} is missing`);
    return;
  }
  const schema = header.schema as Json | undefined;
  if (!schema) return;
  const typed = schema.type === "integer" || schema.type === "number" ? (/^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value) : value;
  const validate = validatorFor(`${pointer}/schema`);
  if (!validate(typed)) fail(res, `header ${name}: ${JSON.stringify(value)} ${validate.errors?.map((e) => e.message).join("; ")}`);
}

/**
 * Throws an Error naming the mismatch when `res` is not a response the OpenAPI document allows for its request.
 * Requests outside `/v1/ext`, and HEAD/OPTIONS requests, pass unchecked.
 */
export function assertDocumentedResponse(res: ReceivedResponse): void {
  const method = res.method.toLowerCase();
  const path = new URL(res.url, "http://x").pathname;
  if (!path.startsWith(API_BASE_PATH + "/") || method === "head" || method === "options") return;
  const { doc } = init();
  const contentType = (res.headers.get("content-type") ?? "").split(";")[0]!.trim();

  const found = findOperation(method, path);
  if (!found?.operation) {
    // Not an operation of the document: the server must answer with a problem (404 for an unknown path), and with
    // 405 + Allow for a documented path that does not support the method (CONTRACT "HTTP semantics").
    if (res.status >= 500 || contentType !== PROBLEM_CONTENT_TYPE || !ProblemSchema.safeParse(res.body).success) {
      fail(res, "no documented operation matches, and the response is not a 4xx problem");
    }
    if (found && (res.status !== 405 || !res.headers.get("allow"))) fail(res, `${found.template} does not support ${method.toUpperCase()}: expected 405 with Allow`);
    return;
  }
  const match = { template: found.template, operation: found.operation };
  const responsesPointer = pointerOf("", "paths", match.template, method, "responses");
  const declared = match.operation.responses?.[String(res.status)];
  if (!declared) {
    fail(res, `status ${res.status} is not documented for ${method.toUpperCase()} ${match.template} (documented: ${Object.keys(match.operation.responses).join(", ")})`);
  }
  const resolved = deref(doc, declared);
  const responsePointer = resolved.pointer ?? `${responsesPointer}/${res.status}`;
  const response = resolved.value;

  for (const [name, raw] of Object.entries((response.headers ?? {}) as Json)) {
    const h = deref(doc, raw);
    checkHeader(res, name, h.value, h.pointer ?? `${responsePointer}/headers/${pointerOf(name)}`);
  }

  const content = response.content as Json | undefined;
  if (!content) {
    if (res.body !== undefined && res.body !== "") fail(res, "the document declares no body, yet one was sent");
    return;
  }
  if (!content[contentType]) fail(res, `content type ${JSON.stringify(contentType)} is not documented (documented: ${Object.keys(content).join(", ")})`);
  const validate = validatorFor(`${responsePointer}/content/${pointerOf(contentType)}/schema`);
  if (!validate(res.body)) {
    fail(res, `body: ${validate.errors?.slice(0, 5).map((e) => `${e.instancePath || "/"} ${e.message}`).join("; ")}`);
  }
}
