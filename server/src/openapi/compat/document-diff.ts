/**
 * Breaking changes between two OpenAPI 3.1 documents of the external API (CONTRACT "Versioning and compatibility",
 * "HTTP semantics, order of checks"): every path of the baseline under the compared major prefix (`/v1/`) must still
 * exist with every operation; each operation must keep its parameters (no new required one, none required that was
 * optional, no narrower schema), its request body (no new required field, no narrower schema), every response status
 * (success or error) and, per response kept, its headers and body (no field removed, optional or not). Paths under another major
 * prefix (`/v2/ext/`) are not compared: a new major version may change anything.
 */
import { compareSchemas, resolveRef, type SchemaContext } from "./schema-diff";
import type { BreakingChange, Json } from "./types";

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;

/** The parameters of an operation (path-item level ones included), keyed `in name` (header names in lower case). */
function parametersOf(doc: Json, item: Json, op: Json): Map<string, Json> {
  const out = new Map<string, Json>();
  for (const raw of [...(item.parameters ?? []), ...(op.parameters ?? [])]) {
    const p = resolveRef(doc, raw) ?? {};
    out.set(`${p.in} ${p.in === "header" ? String(p.name).toLowerCase() : p.name}`, p);
  }
  return out;
}

function compareParameters(where: string, bItem: Json, bOp: Json, hItem: Json, hOp: Json, ctx: SchemaContext, out: BreakingChange[]): void {
  const bParams = parametersOf(ctx.base, bItem, bOp);
  const hParams = parametersOf(ctx.head, hItem, hOp);
  for (const [key, b] of bParams) {
    const h = hParams.get(key);
    if (!h) {
      out.push({ kind: "removed-parameter", where: `${where} ${key}`, detail: `parameter ${key} removed` });
      continue;
    }
    if (h.required && !b.required) out.push({ kind: "new-required-parameter", where: `${where} ${key}`, detail: `parameter ${key} is now required` });
    compareSchemas(b.schema, h.schema, "request", `${where} ${key}`, ctx, out);
  }
  for (const [key, h] of hParams) {
    if (!bParams.has(key) && h.required) out.push({ kind: "new-required-parameter", where: `${where} ${key}`, detail: `new required parameter ${key}` });
  }
}

function compareRequestBody(where: string, bOp: Json, hOp: Json, ctx: SchemaContext, out: BreakingChange[]): void {
  const b = resolveRef(ctx.base, bOp.requestBody);
  const h = resolveRef(ctx.head, hOp.requestBody);
  if (!b) {
    if (h?.required) out.push({ kind: "new-required-request-body", where: `${where} body`, detail: "a request body is now required" });
    return;
  }
  if (!h) {
    out.push({ kind: "removed-request-body", where: `${where} body`, detail: "the request body was removed" });
    return;
  }
  if (h.required && !b.required) out.push({ kind: "new-required-request-body", where: `${where} body`, detail: "the request body is now required" });
  for (const [media, content] of Object.entries((b.content ?? {}) as Json)) {
    const hContent = h.content?.[media];
    if (!hContent) {
      out.push({ kind: "removed-media-type", where: `${where} body`, detail: `request media type ${media} removed` });
      continue;
    }
    compareSchemas(content.schema, hContent.schema, "request", `${where} body`, ctx, out);
  }
}

/**
 * The change for a baseline response status the new document no longer lists for the same operation. Any status
 * counts, not only 2xx: a client may branch on a 404 or a 422, and answering another status or code for an existing
 * condition is breaking (CONTRACT "Versioning and compatibility").
 */
function removedStatus(where: string, status: string, hResponses: Json): BreakingChange {
  const success = /^2/.test(status);
  const now = Object.keys(hResponses).filter((s) => (success ? /^2/.test(s) : !/^2/.test(s)));
  return {
    kind: success ? "removed-success-status" : "removed-response-status",
    where: `${where} ${status}`,
    detail: `${success ? "success" : "response"} status ${status} removed (now ${now.join(", ") || "none"})`,
  };
}

function compareResponses(where: string, bOp: Json, hOp: Json, ctx: SchemaContext, out: BreakingChange[]): void {
  const bResponses: Json = bOp.responses ?? {};
  const hResponses: Json = hOp.responses ?? {};
  for (const [status, raw] of Object.entries(bResponses)) {
    const h = resolveRef(ctx.head, hResponses[status]);
    if (!h) {
      out.push(removedStatus(where, status, hResponses));
      continue;
    }
    const b = resolveRef(ctx.base, raw) ?? {};
    for (const name of Object.keys(b.headers ?? {})) {
      const hHeader = Object.keys(h.headers ?? {}).find((n) => n.toLowerCase() === name.toLowerCase());
      if (!hHeader) {
        out.push({ kind: "removed-response-header", where: `${where} ${status} header ${name}`, detail: `response header ${name} removed` });
        continue;
      }
      const bh = resolveRef(ctx.base, b.headers[name]) ?? {};
      const hh = resolveRef(ctx.head, h.headers[hHeader]) ?? {};
      if (bh.required && !hh.required) out.push({ kind: "response-field-optional", where: `${where} ${status} header ${name}`, detail: `header ${name} is no longer always sent` });
      compareSchemas(bh.schema, hh.schema, "response", `${where} ${status} header ${name}`, ctx, out);
    }
    for (const [media, content] of Object.entries((b.content ?? {}) as Json)) {
      const hContent = h.content?.[media];
      if (!hContent) {
        out.push({ kind: "removed-media-type", where: `${where} ${status}`, detail: `response media type ${media} removed` });
        continue;
      }
      compareSchemas(content.schema, hContent.schema, "response", `${where} ${status} body`, ctx, out);
    }
  }
}

/**
 * Every breaking change from the `base` document (the committed baseline) to `head` (the served document).
 * @param prefix the major prefix compared (default `/v1/`); baseline paths outside it are skipped.
 * @returns the changes in document order (empty when `head` is compatible).
 */
export function findBreakingChanges(base: Json, head: Json, prefix = "/v1/"): BreakingChange[] {
  const out: BreakingChange[] = [];
  const ctx: SchemaContext = { base, head };
  for (const [path, bItem] of Object.entries((base.paths ?? {}) as Json)) {
    if (!path.startsWith(prefix)) continue;
    const hItem = head.paths?.[path];
    if (!hItem) {
      out.push({ kind: "removed-path", where: path, detail: `path ${path} removed` });
      continue;
    }
    for (const method of METHODS) {
      const bOp = bItem[method];
      if (!bOp) continue;
      const where = `${method.toUpperCase()} ${path}`;
      const hOp = hItem[method];
      if (!hOp) {
        out.push({ kind: "removed-operation", where, detail: `operation ${where} removed` });
        continue;
      }
      compareParameters(where, bItem, bOp, hItem, hOp, ctx, out);
      compareRequestBody(where, bOp, hOp, ctx, out);
      compareResponses(where, bOp, hOp, ctx, out);
    }
  }
  return out;
}
