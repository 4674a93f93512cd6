/**
 * The route table of the external API, derived from the operation registry (operations.ts), the same source as the
 * OpenAPI document: for a request path, which path template it names and which methods that template supports.
 * CONTRACT "HTTP semantics" (405 with `Allow`, literal segments never taken for ids) and "HTTP semantics, order of
 * checks" (decided by the route alone): http/method-not-allowed.ts answers from it, before any key lookup.
 *
 * Matching follows Express's routing (case-insensitive literals, an optional trailing slash); where two templates
 * match, the one whose first differing segment is a literal wins, so `/items/check-duplicates` is never
 * `/items/{item_id}`.
 */
import type { ApiMethod, ApiOperation } from "./operations";

/** One path template with the operations it serves, keyed by upper-case method. */
export interface RouteEntry {
  /** OpenAPI path template, e.g. `/v1/ext/items/{item_id}`. */
  template: string;
  /** `null` for a `{parameter}` segment, else the literal in lower case. */
  segments: (string | null)[];
  operations: ReadonlyMap<string, ApiOperation>;
  /** The `Allow` header value: the methods, plus HEAD where GET exists and OPTIONS, sorted, joined by ", ". */
  allow: string;
}

/** A compiled route table: `match(path)` gives the entry of the template a request path names, or undefined. */
export interface RouteTable {
  entries: readonly RouteEntry[];
  match(path: string): RouteEntry | undefined;
}

/** The methods a template with `methods` allows, as an `Allow` value (RFC 9110 section 10.2.1). */
export function allowHeader(methods: Iterable<ApiMethod | string>): string {
  const set = new Set([...methods].map((m) => m.toUpperCase()));
  if (set.has("GET")) set.add("HEAD");
  set.add("OPTIONS");
  return [...set].sort().join(", ");
}

function splitPath(path: string): string[] {
  const trimmed = path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
  return trimmed.split("/").slice(1);
}

/** Does `entry` match the request path segments, and how specific is it (a bit per literal segment, first = highest)? */
function specificity(entry: RouteEntry, parts: readonly string[]): number {
  if (entry.segments.length !== parts.length) return -1;
  let score = 0;
  for (const [i, seg] of entry.segments.entries()) {
    const part = parts[i]!;
    score *= 2;
    if (seg === null) {
      if (part === "") return -1;
    } else if (part.toLowerCase() !== seg) {
      return -1;
    } else {
      score += 1;
    }
  }
  return score;
}

/**
 * Compiles `operations` into a route table.
 * @param operations the registry (API_OPERATIONS, or a test's own list).
 */
export function buildRouteTable(operations: readonly ApiOperation[]): RouteTable {
  const byTemplate = new Map<string, Map<string, ApiOperation>>();
  for (const op of operations) {
    const ops = byTemplate.get(op.path) ?? new Map<string, ApiOperation>();
    ops.set(op.method.toUpperCase(), op);
    byTemplate.set(op.path, ops);
  }
  const entries: RouteEntry[] = [...byTemplate].map(([template, ops]) => ({
    template,
    segments: splitPath(template).map((s) => (s.startsWith("{") ? null : s.toLowerCase())),
    operations: ops,
    allow: allowHeader(ops.keys()),
  }));
  return {
    entries,
    match(path) {
      const parts = splitPath(path);
      let best: RouteEntry | undefined;
      let bestScore = -1;
      for (const entry of entries) {
        const score = specificity(entry, parts);
        if (score > bestScore) [best, bestScore] = [entry, score];
      }
      return best;
    },
  };
}
