/**
 * Property-based fuzzing of every external API endpoint (issue 12, "Hostile input"): arbitrary JSON, strings, numbers,
 * unicode, huge and deeply nested bodies, hostile path ids, bad cursors and query parameters. The property: the server
 * never answers 500 or above, and every error is a problem+json body of the contract (`ProblemSchema`) of bounded size.
 * FUZZ_RUNS (default 10,000) sets the number of cases; a failure prints fast-check's seed to replay it.
 */
import fc from "fast-check";
import { ProblemSchema } from "@stageline/shared";
import { startTestServerWithRateLimit, type TestServer } from "./helpers/test-server";

const RUNS = Number(process.env.FUZZ_RUNS ?? 10_000);
/** The largest error body accepted (issue 12: every error body is bounded). */
const MAX_ERROR_BYTES = 64 * 1024;

type Ids = Record<"item" | "doomed" | "task" | "note" | "doomedNote" | "pipeline" | "stage" | "webhook" | "delivery" | "event", string>;

/** Every endpoint of the external API, with the path parameters it takes. */
const ENDPOINTS: { method: string; path: string }[] = [
  { method: "GET", path: "/me" },
  { method: "GET", path: "/users" },
  { method: "GET", path: "/pipelines" },
  { method: "GET", path: "/pipelines/{pipeline}/stages" },
  { method: "GET", path: "/pipelines/{pipeline}/stages/{stage}/statuses" },
  { method: "GET", path: "/pipelines/{pipeline}/fields" },
  { method: "GET", path: "/items" },
  { method: "POST", path: "/items" },
  { method: "POST", path: "/items/check-duplicates" },
  { method: "POST", path: "/items/upsert" },
  { method: "POST", path: "/items/batch" },
  { method: "POST", path: "/tasks/batch" },
  // Its own item (`doomed`): once a request deletes it, the other endpoints keep fuzzing a living item.
  { method: "DELETE", path: "/items/{doomed}" },
  { method: "GET", path: "/items/{item}" },
  { method: "PATCH", path: "/items/{item}" },
  { method: "GET", path: "/tasks" },
  { method: "POST", path: "/tasks" },
  { method: "GET", path: "/tasks/{task}" },
  { method: "PATCH", path: "/tasks/{task}" },
  { method: "GET", path: "/notes" },
  { method: "POST", path: "/notes" },
  { method: "GET", path: "/notes/{note}" },
  { method: "PATCH", path: "/notes/{note}" },
  // Its own note (`doomedNote`), as for the item.
  { method: "DELETE", path: "/notes/{doomedNote}" },
  { method: "GET", path: "/webhooks/sample/{resource}" },
  { method: "POST", path: "/webhooks" },
  { method: "GET", path: "/webhooks" },
  { method: "DELETE", path: "/webhooks/{webhook}" },
  { method: "POST", path: "/webhooks/{webhook}/rotate-secret" },
  { method: "GET", path: "/webhooks/{webhook}/deliveries" },
  { method: "POST", path: "/webhooks/{webhook}/deliveries/{delivery}/redeliver" },
  { method: "POST", path: "/webhooks/{webhook}/replay" },
  { method: "GET", path: "/events" },
  { method: "GET", path: "/events/{event}" },
];

/** Field names the API knows, so generated bodies and queries reach validation beyond "unknown field". */
const KNOWN_FIELDS = [
  "name", "pipeline_id", "stage_id", "status_id", "metadata", "contact_id", "source", "version", "title", "description",
  "due_at", "priority", "task_type", "assigned_to", "item_id", "is_completed", "notes", "duration_minutes",
  "reminder_minutes", "target_url", "event", "events", "limit", "cursor", "created_after", "due_before", "due_after",
  "email", "deal_value", "q", "short_id", "updated_after", "filter", "fields", "body", "pinned", "after", "resource_id", "since", "until",
  "only_failed",
  "email", "deal_value", "q", "short_id", "updated_after", "filter", "fields", "operations", "atomic", "op", "ref", "task_id",
];

const hostileStrings = fc.constantFrom(
  "", " ", "\u0000", "%00", "%FF", "%", "..", "../../etc/passwd", "null", "undefined", "NaN", "-1", "0", "1e309",
  "0000-01-01T00:00:00Z", "+275760-09-13T00:00:00.000Z", "2026-02-31T00:00:00Z", "'; DROP TABLE items; --",
  "<script>alert(1)</script>", "\uD800", "\uFFFF", "🦄".repeat(50), "a".repeat(300), "https://[::127.0.0.1]/x",
  "http://169.254.169.254/", "javascript:alert(1)", "item.created", "items:read", "item.created,task.created", "item.created,",
);

/** Percent-encodes `s`; a lone surrogate (which encodeURIComponent refuses) becomes its raw, invalid UTF-8 bytes. */
function enc(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return "%ED%A0%80";
  }
}

const anyText = fc.oneof(fc.string(), fc.string({ unit: "grapheme" }), fc.string({ unit: "binary", maxLength: 40 }), hostileStrings);
const anyNumber = fc.oneof(fc.integer(), fc.double(), fc.constantFrom(0, -1, 2 ** 31, 2 ** 53, Number.MAX_VALUE, -0));

/** A JSON value biased toward the API's field names and hostile values. */
const fieldValue: fc.Arbitrary<unknown> = fc.oneof(
  anyText,
  anyNumber,
  fc.boolean(),
  fc.constant(null),
  fc.array(anyText, { maxLength: 5 }),
  fc.dictionary(fc.oneof(fc.constantFrom(...KNOWN_FIELDS), fc.string()), fc.oneof(anyText, anyNumber, fc.boolean()), { maxKeys: 5 }),
);

/** A deeply nested array (JSON parsers and validators must not blow the stack). */
const deepNesting = fc.integer({ min: 100, max: 5_000 }).map((depth) => "[".repeat(depth) + "]".repeat(depth));

/** The raw body text of a request, or undefined for none. */
const bodyText: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 1, arbitrary: fc.constant(undefined) },
  { weight: 6, arbitrary: fc.dictionary(fc.oneof(fc.constantFrom(...KNOWN_FIELDS), fc.string()), fieldValue, { maxKeys: 12 }).map((o) => JSON.stringify(o)) },
  { weight: 2, arbitrary: fc.jsonValue().map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: fc.string() }, // mostly not JSON at all
  { weight: 1, arbitrary: deepNesting },
  {
    weight: 2, // a batch envelope (CONTRACT "Batch writes") whose operations are arbitrary, with real `op` names mostly
    arbitrary: fc
      .record({
        operations: fc.array(
          fc.oneof(
            fc.dictionary(fc.oneof(fc.constantFrom(...KNOWN_FIELDS), fc.string()), fieldValue, { maxKeys: 8 }).chain((o) =>
              fc.constantFrom("create", "update", "upsert", "delete", "x").map((op) => ({ ...o, op })),
            ),
            fieldValue,
          ),
          { maxLength: 105 },
        ),
        atomic: fc.oneof(fc.boolean(), fieldValue),
      })
      .map((o) => JSON.stringify(o)),
  },
  {
    weight: 1, // thousands of unknown fields (error amplification)
    arbitrary: fc.integer({ min: 500, max: 4_000 }).map((n) => JSON.stringify(Object.fromEntries(Array.from({ length: n }, (_, i) => [`f${i}`, i])))),
  },
  {
    weight: 1, // thousands of metadata keys
    arbitrary: fc.integer({ min: 500, max: 4_000 }).map((n) => JSON.stringify({ name: "x", metadata: Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i])) })),
  },
  { weight: 1, arbitrary: fc.integer({ min: 100_000, max: 1_100_000 }).map((n) => JSON.stringify({ name: "x".repeat(n) })) },
);

/** A cursor: base64url of arbitrary JSON, or arbitrary text. */
const cursor = fc.oneof(
  fc.jsonValue().map((v) => Buffer.from(JSON.stringify(v)).toString("base64url")),
  fc.tuple(anyText, anyText).map((v) => Buffer.from(JSON.stringify(v)).toString("base64url")),
  anyText,
);

/** A query string of known and unknown parameters, values arbitrary (percent-encoded, or raw hostile). */
const queryString = fc
  .array(
    fc.tuple(
      fc.oneof(fc.constantFrom(...KNOWN_FIELDS), fc.string({ maxLength: 10 })),
      fc.oneof(anyText.map(enc), cursor, fc.constantFrom("%00", "%FF", "%E0%A4%A", "a%zz")),
    ),
    { maxLength: 6 },
  )
  .map((pairs) => (pairs.length ? "?" + pairs.map(([k, v]) => `${enc(k)}=${v}`).join("&") : ""));

/** A path parameter: the real id (so bodies reach the service), or something hostile. */
function pathParam(real: string) {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constant(real) },
    { weight: 2, arbitrary: anyText.filter((s) => s.length > 0).map(enc) },
    { weight: 1, arbitrary: fc.constantFrom("%00", "%FF", "a%2Fb", "%2e%2e", "x".repeat(2_000), "00000000-0000-0000-0000-000000000000") },
  );
}

const contentType = fc.constantFrom("application/json", "application/json; charset=utf-8", "text/plain", "application/x-www-form-urlencoded", "application/json; charset=latin1", undefined);

describe("fuzzing every endpoint", () => {
  let t: TestServer;
  let ids: Ids;
  beforeAll(async () => {
    t = await startTestServerWithRateLimit(10_000_000);
    const stage = t.pipeline.stages[0]!;
    const item = await t.request("POST", "/v1/ext/items", { name: "Fuzz target", pipeline_id: t.pipeline.id, stage_id: stage.id, metadata: { email: "fuzz@example.com" } });
    const doomed = await t.request("POST", "/v1/ext/items", { name: "Fuzz doomed", pipeline_id: t.pipeline.id, stage_id: stage.id });
    const task = await t.request("POST", "/v1/ext/tasks", { title: "Fuzz task", due_at: "2026-12-01T09:00:00Z", assigned_to: "ada", item_id: item.body.item_id });
    const hook = await t.request("POST", "/v1/ext/webhooks", { target_url: "http://127.0.0.1:9/fuzz", event: "item.created" });
    const note = await t.request("POST", "/v1/ext/notes", { item_id: item.body.item_id, body: "Fuzz note" });
    const doomedNote = await t.request("POST", "/v1/ext/notes", { item_id: item.body.item_id, body: "Fuzz doomed note" });
    const created = [item, doomed, task, hook, note, doomedNote];
    if (created.some((res) => res.status !== 201)) throw new Error("fixtures were not created");
    const event = await t.request("GET", "/v1/ext/events?limit=1");
    if (event.status !== 200 || event.body.length !== 1) throw new Error("no event in the feed");
    ids = {
      item: item.body.item_id, doomed: doomed.body.item_id, task: task.body.task_id, note: note.body.note_id, doomedNote: doomedNote.body.note_id,
      pipeline: t.pipeline.id, stage: stage.id, webhook: hook.body.id, delivery: "00000000-0000-0000-0000-000000000000", event: event.body[0].event_id,
    };
  });
  afterAll(async () => {
    await t?.close();
  });

  it(`answers ${RUNS.toLocaleString("en-US")} arbitrary requests without a 5xx, every error as a bounded problem+json`, async () => {
    const request = fc.record({
      endpoint: fc.constantFrom(...ENDPOINTS),
      params: fc.record({
        item: pathParam("ITEM"), doomed: pathParam("DOOMED"), task: pathParam("TASK"), note: pathParam("NOTE"), doomedNote: pathParam("DOOMED_NOTE"), pipeline: pathParam("PIPELINE"), stage: pathParam("STAGE"),
        webhook: pathParam("WEBHOOK"), delivery: pathParam("DELIVERY"), event: pathParam("EVENT"), resource: fc.oneof(fc.constantFrom("item", "task", "items", "tasks", "notes"), anyText.map(enc)),
      }),
      query: queryString,
      body: bodyText,
      contentType,
    });
    await fc.assert(
      fc.asyncProperty(request, async ({ endpoint, params, query, body, contentType: type }) => {
        const real: Record<string, string> = {
          ITEM: ids.item, DOOMED: ids.doomed, TASK: ids.task, NOTE: ids.note, DOOMED_NOTE: ids.doomedNote, PIPELINE: ids.pipeline, STAGE: ids.stage,
          WEBHOOK: ids.webhook, DELIVERY: ids.delivery, EVENT: ids.event,
        };
        const path = endpoint.path.replace(/\{(\w+)\}/g, (_m, name: keyof typeof params) => real[params[name]] ?? params[name]);
        const headers: Record<string, string> = { "x-api-key": t.apiKey };
        if (type) headers["content-type"] = type;
        const method = endpoint.method;
        const res = await fetch(`${t.url}/v1/ext${path}${query}`, { method, headers, body: method === "GET" ? undefined : body });
        const text = await res.text();
        const where = `${method} ${path}${query.slice(0, 200)} -> ${res.status} ${text.slice(0, 300)}`;
        if (res.status >= 500) throw new Error(`server error: ${where}`);
        if (res.status >= 400) {
          if (!/^application\/problem\+json/.test(res.headers.get("content-type") ?? "")) throw new Error(`not problem+json: ${where}`);
          if (text.length > MAX_ERROR_BYTES) throw new Error(`error body of ${text.length} bytes: ${where}`);
          const parsed = ProblemSchema.safeParse(JSON.parse(text));
          if (!parsed.success || parsed.data.status !== res.status) throw new Error(`not a contract problem: ${where}`);
        }
      }),
      { numRuns: RUNS, endOnFailure: true },
    );
  }, 600_000);
});
