/**
 * Bulk seeding (issue #4, item 4): items of one company are inserted with `INSERT ... SELECT FROM generate_series`,
 * not through the API, so a million rows take seconds rather than hours.
 *
 * Seeded item number `g` (1, 2, 3, ...) has a deterministic id (an RFC 4122-shaped UUID made from an MD5 of the
 * company id and `g`) and `created_at = t0 - g seconds`, so the newest-first order is g = 1, 2, 3, ... and the
 * keyset cursor of any position can be computed without asking the server. Short ids are taken from the pipeline's
 * own sequence (`pipeline_short_id_sequence(id)`), so they never collide with items created later through the API.
 */
import crypto from "node:crypto";
import type { Sql } from "./db";

export interface SeedPlan {
  companyId: string;
  pipelineId: string;
  /** Creation time of seeded item 0 (whole seconds, epoch ms); item g is `g` seconds older. */
  t0Ms: number;
}

/** Position of one item in the keyset order (created_at desc, id desc). */
export interface KeysetPosition {
  createdAt: Date;
  id: string;
}

const BATCH = 100_000;

/** SQL expression turning `md5(...)` text into a version-4-shaped UUID string (same as `seededItemId`). */
const UUID_FROM_MD5 = (h: string) =>
  `substr(${h},1,8)||'-'||substr(${h},9,4)||'-4'||substr(${h},14,3)||'-8'||substr(${h},18,3)||'-'||substr(${h},21,12)`;

/** The id of seeded item `g` (matches the SQL in `seedItems`). */
export function seededItemId(companyId: string, g: number): string {
  return uuidFromMd5(`stageline-bench:${companyId}:${g}`);
}

/** The UUID-shaped id `UUID_FROM_MD5` makes of `md5(text)`. */
function uuidFromMd5(text: string): string {
  const h = crypto.createHash("md5").update(text).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** The keyset position of seeded delivery `g` of the endpoint `endpointId` (matches `seedDeliveryLog`). */
export function seededDeliveryPosition(plan: SeedPlan, endpointId: string, g: number): KeysetPosition {
  return { createdAt: new Date(plan.t0Ms - g * 1000), id: uuidFromMd5(`stageline-bench-delivery:${endpointId}:${g}`) };
}

/** The keyset position of seeded item `g`. */
export function seededItemPosition(plan: SeedPlan, g: number): KeysetPosition {
  return { createdAt: new Date(plan.t0Ms - g * 1000), id: seededItemId(plan.companyId, g) };
}

/**
 * The opaque list cursor for "the page after `position`", in the server's format
 * (shared/src/keyset-cursor.ts: base64url of JSON `[created_at ISO, id]`).
 */
export function keysetCursor(position: KeysetPosition): string {
  return Buffer.from(JSON.stringify([position.createdAt.toISOString(), position.id])).toString("base64url");
}

interface BlueprintField {
  key: string;
  type: string;
  options?: string[];
}

/** SQL expression (of `g`) giving a plausible value for one custom field, or null when the type is not generated. */
function fieldValueSql(field: BlueprintField): string | null {
  switch (field.type) {
    case "email":
      return `to_jsonb('lead' || g || '@example.com')`;
    case "number":
      return `to_jsonb((g * 37) % 100000)`;
    case "text":
    case "phone":
      return `to_jsonb('value ' || g)`;
    case "boolean":
      return `to_jsonb(g % 2 = 0)`;
    case "select":
      return field.options?.length ? `to_jsonb((ARRAY[${field.options.map((o) => `'${o.replace(/'/g, "''")}'`).join(",")}])[1 + g % ${field.options.length}])` : null;
    default:
      return null;
  }
}

/** Reads the pipeline's stages (in order), the first status of each and its custom fields. */
async function loadPipelineShape(sql: Sql, plan: SeedPlan) {
  const stages = await sql.query<{ stage_id: string; status_id: string }>(
    `SELECT s.id AS stage_id,
            (SELECT st.id FROM statuses st WHERE st.stage_id = s.id ORDER BY st.position, st.id LIMIT 1) AS status_id
       FROM stages s WHERE s.pipeline_id = $1 ORDER BY s.position, s.id`,
    [plan.pipelineId],
  );
  const usable = stages.filter((s) => s.status_id);
  if (!usable.length) throw new Error(`pipeline ${plan.pipelineId} has no stage with a status: cannot seed items`);
  const [pipeline] = await sql.query<{ company_id: string; blueprint: unknown }>(
    `SELECT company_id, blueprint FROM pipelines WHERE id = $1`,
    [plan.pipelineId],
  );
  if (!pipeline) throw new Error(`pipeline ${plan.pipelineId} not found`);
  if (pipeline.company_id !== plan.companyId) throw new Error(`pipeline ${plan.pipelineId} belongs to another company`);
  const blueprint = (typeof pipeline.blueprint === "string" ? JSON.parse(pipeline.blueprint) : pipeline.blueprint) as {
    custom_fields?: BlueprintField[];
  };
  return { stages: usable, fields: blueprint?.custom_fields ?? [] };
}

/**
 * Inserts seeded items `from` .. `to - 1` (1-based numbering, see the module comment) in batches of 100,000, each
 * one `INSERT ... SELECT FROM generate_series` that also advances the pipeline's short-id counter, then vacuums,
 * analyzes and checkpoints.
 * @throws when the pipeline has no stages, or on any database error (the current batch is rolled back).
 */
export async function seedItems(sql: Sql, plan: SeedPlan, from: number, to: number, onProgress?: (done: number) => void): Promise<void> {
  if (to <= from) return;
  const { stages, fields } = await loadPipelineShape(sql, plan);
  const arr = (values: string[]) => `{${values.map((v) => `"${v}"`).join(",")}}`;
  const stageIds = arr(stages.map((s) => s.stage_id));
  const statusIds = arr(stages.map((s) => s.status_id));
  const metadataPairs = fields
    .map((f) => [f, fieldValueSql(f)] as const)
    .filter((pair): pair is readonly [BlueprintField, string] => pair[1] !== null)
    .map(([f, value]) => `'${f.key.replace(/'/g, "''")}', ${value}`);
  const metadata = metadataPairs.length ? `jsonb_build_object(${metadataPairs.join(", ")})` : `'{}'::jsonb`;
  const idExpr = UUID_FROM_MD5(`md5('stageline-bench:' || $1::text || ':' || g)`);
  for (let start = from; start < to; start += BATCH) {
    const end = Math.min(start + BATCH, to);
    const count = end - start;
    await sql.exec("BEGIN");
    try {
      // Takes `count` numbers from the pipeline's short-id sequence at once (setval past them). Not atomic against
      // concurrent creates, which is fine here: nothing else creates items while the bench seeds.
      const [counter] = await sql.query<{ prefix: string; first: number }>(
        `WITH seq AS (SELECT p.short_id_prefix AS prefix, pipeline_short_id_sequence(p.id)::regclass AS id
                      FROM pipelines p WHERE p.id = $1)
         SELECT seq.prefix,
                setval(seq.id, COALESCE(pg_sequence_last_value(seq.id),
                                        (SELECT s.seqstart - 1 FROM pg_sequence s WHERE s.seqrelid = seq.id)) + $2::int)::int
                  - $2::int + 1 AS first
         FROM seq`,
        [plan.pipelineId, count],
      );
      await sql.query(
        `INSERT INTO items (id, company_id, pipeline_id, stage_id, status_id, short_id, name, source, metadata, version, created_at, updated_at)
         SELECT ${idExpr}, $1::text, $2::text,
                ($3::text[])[1 + g % $4::int], ($5::text[])[1 + g % $4::int],
                $6::text || '-' || ($7::int + g - $8::int),
                'Seeded lead ' || g, 'bench', ${metadata}, 1,
                to_timestamp($9::double precision / 1000) - make_interval(secs => g),
                to_timestamp($9::double precision / 1000) - make_interval(secs => g)
           FROM generate_series($8::int, $10::int) AS g`,
        [plan.companyId, plan.pipelineId, stageIds, stages.length, statusIds, counter!.prefix, Number(counter!.first), start, plan.t0Ms, end - 1],
      );
      await sql.exec("COMMIT");
    } catch (err) {
      await sql.exec("ROLLBACK").catch(() => undefined);
      throw err;
    }
    onProgress?.(end - from);
  }
  // Leave no background work for the measurements: vacuum (sets hint bits and the visibility map, which autovacuum
  // would otherwise do while the bench measures), fresh statistics, and a checkpoint where permitted.
  await sql.exec("VACUUM (ANALYZE) items");
  await sql.exec("CHECKPOINT").catch(() => undefined);
}

/**
 * Checks that seeded item `g` sits where the cursor arithmetic says it does: the row right after it in the list
 * order is item `g + 1`. Guards the deep-page figures against measuring an empty page.
 */
export async function verifySeededOrder(sql: Sql, plan: SeedPlan, g: number): Promise<void> {
  const pos = seededItemPosition(plan, g);
  const rows = await sql.query<{ id: string }>(
    `SELECT id FROM items WHERE company_id = $1 AND (created_at, id) < ($2::timestamptz, $3)
      ORDER BY created_at DESC, id DESC LIMIT 1`,
    [plan.companyId, pos.createdAt.toISOString(), pos.id],
  );
  const expected = seededItemId(plan.companyId, g + 1);
  if (rows[0]?.id !== expected) {
    throw new Error(`seeded order check failed after item ${g}: expected ${expected}, found ${rows[0]?.id ?? "nothing"}`);
  }
}

/**
 * Creates a paused console webhook endpoint of the company (so the dispatcher never sends its seeded deliveries)
 * with `count` finished deliveries in its delivery log, each with its outbox event and one attempt: every tenth
 * failed with a 500, the rest delivered with a 200. Delivery `g` is `g` seconds older than `t0Ms`, like the items.
 * Bulk SQL in batches of 100,000, then vacuum and analyze.
 * @returns the endpoint id.
 */
export async function seedDeliveryLog(sql: Sql, plan: SeedPlan, count: number, onProgress?: (done: number) => void): Promise<string> {
  const endpointId = seededItemId(plan.companyId, -1);
  await sql.query(
    `INSERT INTO webhook_subscriptions (id, company_id, target_url, events, origin, description, paused_at, secret)
     VALUES ($1, $2, 'https://hooks.example.com/bench', ARRAY['item.created'], 'console', 'Benchmark delivery log', now(),
             'whsec_YmVuY2hiZW5jaGJlbmNoYmVuY2hiZW5jaGJlbmNoYmVuY2hi')`,
    [endpointId, plan.companyId],
  );
  const uuid = (tag: string) => UUID_FROM_MD5(`md5('stageline-bench-${tag}:' || $1::text || ':' || g)`);
  for (let start = 1; start <= count; start += BATCH) {
    const end = Math.min(start + BATCH - 1, count);
    const at = `to_timestamp($2::double precision / 1000) - make_interval(secs => g)`;
    const range = [endpointId, plan.t0Ms, start, end];
    await sql.exec("BEGIN");
    try {
      await sql.query(
        `INSERT INTO webhook_events (id, company_id, type, resource_id, payload, created_at)
         SELECT ${uuid("event")}, $5::text, 'item.created', 'seeded-' || g, json_build_object('item_id', 'seeded-' || g, 'name', 'Seeded lead ' || g), ${at}
           FROM generate_series($3::int, $4::int) AS g`,
        [...range, plan.companyId],
      );
      await sql.query(
        `INSERT INTO webhook_deliveries (id, event_id, subscription_id, seq, state, attempt_count, next_attempt_at, last_status,
           last_duration_ms, last_error, created_at, completed_at)
         SELECT ${uuid("delivery")}, ${uuid("event")}, $1::text, g, CASE WHEN g % 10 = 0 THEN 'failed' ELSE 'succeeded' END, 1, ${at},
                CASE WHEN g % 10 = 0 THEN 500 ELSE 200 END, 20 + g % 50, CASE WHEN g % 10 = 0 THEN 'HTTP 500' END, ${at}, ${at}
           FROM generate_series($3::int, $4::int) AS g`,
        range,
      );
      await sql.query(
        `INSERT INTO webhook_attempts (id, delivery_id, attempted_at, response_status, duration_ms, response_excerpt, request_headers)
         SELECT ${uuid("attempt")}, ${uuid("delivery")}, ${at}, CASE WHEN g % 10 = 0 THEN 500 ELSE 200 END, 20 + g % 50, 'ok',
                '{"content-type":"application/json"}'::jsonb
           FROM generate_series($3::int, $4::int) AS g`,
        range,
      );
      await sql.exec("COMMIT");
    } catch (err) {
      await sql.exec("ROLLBACK").catch(() => undefined);
      throw err;
    }
    onProgress?.(end);
  }
  await sql.exec("VACUUM (ANALYZE) webhook_events");
  await sql.exec("VACUUM (ANALYZE) webhook_deliveries");
  await sql.exec("VACUUM (ANALYZE) webhook_attempts");
  return endpointId;
}
