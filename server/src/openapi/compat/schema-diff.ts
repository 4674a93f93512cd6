/**
 * Breaking changes between two JSON Schemas of one place of an OpenAPI 3.1 document (CONTRACT "Versioning and
 * compatibility"). A request schema breaks when the new one refuses something the old one accepted (narrower type,
 * removed enum value, a lower upper limit or higher lower limit, a new pattern or format, a new required field, a
 * removed field of a closed object); a response schema breaks when it drops a field (optional or not), makes a
 * required field optional, may now hold another type, or drops an enum value. Adding is never breaking: new optional
 * request fields, new response fields, new enum values in responses (new event names, new codes).
 */
import type { BreakingChange, Direction, Json } from "./types";

/** The two documents, for `$ref` resolution. */
export interface SchemaContext {
  base: Json;
  head: Json;
}

/** Limits where a smaller value in the new schema refuses more. */
const UPPER_LIMITS = ["maxLength", "maximum", "exclusiveMaximum", "maxItems", "maxProperties"] as const;
/** Limits where a larger value in the new schema refuses more. */
const LOWER_LIMITS = ["minLength", "minimum", "exclusiveMinimum", "minItems", "minProperties"] as const;

/** Follows local `$ref`s (`#/components/...`) of `doc`. */
export function resolveRef(doc: Json, value: Json | undefined): Json | undefined {
  let current = value;
  for (let hops = 0; current && typeof current.$ref === "string" && hops < 20; hops++) {
    let target: any = doc;
    for (const seg of current.$ref.replace(/^#\//, "").split("/")) target = target?.[seg.replace(/~1/g, "/").replace(/~0/g, "~")];
    current = target;
  }
  return current;
}

/** The alternatives of a schema: its `anyOf`/`oneOf` branches, or itself. */
function variants(schema: Json): Json[] {
  const list = schema.anyOf ?? schema.oneOf;
  return Array.isArray(list) && list.length > 0 ? list : [schema];
}

/** The JSON types a schema names (`type` may be a list in 3.1); empty = any. */
function typesOf(schema: Json): Set<string> {
  const t = schema.type;
  const set = new Set<string>(Array.isArray(t) ? t : t ? [t] : []);
  if (set.has("number")) set.add("integer");
  return set;
}

/** A label of a variant, to pair the old and new alternatives of a union: its declared type(s). */
function variantKey(schema: Json): string {
  const t = schema.type;
  if (Array.isArray(t)) return [...t].sort().join("|");
  return typeof t === "string" ? t : "any";
}

function compareLimits(b: Json, h: Json, where: string, out: BreakingChange[]): void {
  for (const key of UPPER_LIMITS) {
    if (h[key] !== undefined && (b[key] === undefined || h[key] < b[key])) {
      out.push({ kind: "lower-limit", where, detail: `${key} ${b[key] ?? "(none)"} -> ${h[key]}` });
    }
  }
  for (const key of LOWER_LIMITS) {
    if (h[key] !== undefined && (b[key] === undefined || h[key] > b[key])) {
      out.push({ kind: "lower-limit", where, detail: `${key} ${b[key] ?? "(none)"} -> ${h[key]}` });
    }
  }
  for (const key of ["pattern", "format", "multipleOf", "const"] as const) {
    if (h[key] !== undefined && JSON.stringify(h[key]) !== JSON.stringify(b[key])) {
      out.push({ kind: "changed-constraint", where, detail: `${key} ${JSON.stringify(b[key] ?? null)} -> ${JSON.stringify(h[key])}` });
    }
  }
}

function compareEnums(b: Json, h: Json, dir: Direction, where: string, out: BreakingChange[]): void {
  if (Array.isArray(b.enum) && Array.isArray(h.enum)) {
    for (const value of b.enum) {
      if (!h.enum.some((v: unknown) => JSON.stringify(v) === JSON.stringify(value))) {
        out.push({ kind: "removed-enum-value", where, detail: `enum value ${JSON.stringify(value)} removed` });
      }
    }
  } else if (dir === "request" && Array.isArray(h.enum) && !Array.isArray(b.enum)) {
    out.push({ kind: "narrower-type", where, detail: `now limited to ${JSON.stringify(h.enum)}` });
  }
}

function compareObjects(b: Json, h: Json, dir: Direction, where: string, ctx: SchemaContext, out: BreakingChange[], seen: Set<string>): void {
  const bProps: Json = b.properties ?? {};
  const hProps: Json = h.properties ?? {};
  const bRequired = new Set<string>(b.required ?? []);
  const hRequired = new Set<string>(h.required ?? []);
  for (const name of Object.keys(bProps)) {
    const at = `${where}.${name}`;
    if (!(name in hProps)) {
      if (dir === "response" || h.additionalProperties === false) out.push({ kind: "removed-field", where: at, detail: `field ${name} removed` });
      continue;
    }
    if (dir === "response" && bRequired.has(name) && !hRequired.has(name)) {
      out.push({ kind: "response-field-optional", where: at, detail: `field ${name} is no longer always present` });
    }
    compareSchemas(bProps[name], hProps[name], dir, at, ctx, out, seen);
  }
  if (dir === "request") {
    for (const name of hRequired) {
      if (!bRequired.has(name)) out.push({ kind: "new-required-field", where: `${where}.${name}`, detail: `field ${name} is now required` });
    }
    if (h.additionalProperties === false && b.additionalProperties !== false) {
      out.push({ kind: "narrower-type", where, detail: "unknown fields are now refused (additionalProperties: false)" });
    }
  }
  if (b.additionalProperties && typeof b.additionalProperties === "object" && h.additionalProperties && typeof h.additionalProperties === "object") {
    compareSchemas(b.additionalProperties, h.additionalProperties, dir, `${where}.*`, ctx, out, seen);
  }
}

/**
 * Appends to `out` every breaking change from schema `base` (in ctx.base) to `head` (in ctx.head) at `where`.
 * @param dir `request` or `response` (see {@link Direction}).
 * @param seen pairs of `$ref`s already compared (recursive schemas end there).
 */
export function compareSchemas(
  base: Json | undefined,
  head: Json | undefined,
  dir: Direction,
  where: string,
  ctx: SchemaContext,
  out: BreakingChange[],
  seen: Set<string> = new Set(),
): void {
  const pair = `${base?.$ref ?? ""}|${head?.$ref ?? ""}|${dir}`;
  if (base?.$ref && head?.$ref) {
    if (seen.has(pair)) return;
    seen.add(pair);
  }
  const b = resolveRef(ctx.base, base) ?? {};
  const h = resolveRef(ctx.head, head) ?? {};
  const bv = variants(b);
  const hv = variants(h);
  if (bv.length > 1 || hv.length > 1) {
    // Pair the alternatives in order by declared type (two string branches pair first with first, second with second).
    const unmatched = new Set(hv);
    for (const variant of bv) {
      const resolved = resolveRef(ctx.base, variant) ?? {};
      const match = hv.find((candidate) => unmatched.has(candidate) && variantKey(resolveRef(ctx.head, candidate) ?? {}) === variantKey(resolved));
      if (!match) {
        if (dir === "request") out.push({ kind: "narrower-type", where, detail: `no longer accepts ${variantKey(resolved)}` });
        continue;
      }
      unmatched.delete(match);
      compareSchemas(variant, match, dir, where, ctx, out, seen);
    }
    if (dir === "response") {
      for (const extra of unmatched) out.push({ kind: "wider-response-type", where, detail: `may now be ${variantKey(resolveRef(ctx.head, extra) ?? {})}` });
    }
    return;
  }
  const bTypes = typesOf(b);
  const hTypes = typesOf(h);
  if (dir === "request") {
    for (const t of bTypes) if (hTypes.size > 0 && !hTypes.has(t)) out.push({ kind: "narrower-type", where, detail: `type ${[...bTypes].join("|")} -> ${[...hTypes].join("|")}` });
    if (bTypes.size === 0 && hTypes.size > 0) out.push({ kind: "narrower-type", where, detail: `any -> ${[...hTypes].join("|")}` });
    compareLimits(b, h, where, out);
  } else {
    for (const t of hTypes) if (bTypes.size > 0 && !bTypes.has(t)) out.push({ kind: "wider-response-type", where, detail: `type ${[...bTypes].join("|")} -> ${[...hTypes].join("|")}` });
  }
  compareEnums(b, h, dir, where, out);
  if (bTypes.has("object") || b.properties || h.properties) compareObjects(b, h, dir, where, ctx, out, seen);
  if (b.items || h.items) compareSchemas(b.items, h.items, dir, `${where}[]`, ctx, out, seen);
}
