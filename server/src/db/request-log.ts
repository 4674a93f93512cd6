/**
 * Data access for the request log (issue 40; CONTRACT "Request ids and the request log"; table `request_log`,
 * migration 20261208000000_request_log). Raw parameterized SQL, identical on PGlite and PostgreSQL. Every read takes
 * the company id first: one company never reads another's entries.
 */
import type { SqlRunner } from "./sql";

/** One request as logged. Never bodies, query values, headers or secrets (CONTRACT). */
export interface RequestLogEntry {
  /** The response's `Request-Id`. */
  requestId: string;
  companyId: string;
  /** When the request arrived. */
  at: Date;
  /** The HTTP method, or `MCP` for a tool call. */
  method: string;
  /** The OpenAPI path template (`/v1/ext/items/{item_id}`), or the MCP tool's name. */
  route: string;
  /** The ids in the path by parameter name (`{ item_id: "..." }`), or the tool's id arguments; null when none. */
  pathIds: Record<string, string> | null;
  status: number;
  /** The problem `code` of an error answer; null otherwise. */
  code: string | null;
  /** The problem's `errors[].path` values (never the values sent); null when none. */
  errorPaths: string[] | null;
  durationMs: number;
  credentialType: "key" | "oauth";
  /** The API key's id, or the OAuth app's client id. */
  credentialId: string;
  /** The key's or the app's name at the time. */
  credentialName: string | null;
  idempotencyKey: string | null;
  /** Whether the answer was an idempotent replay (`Idempotent-Replayed: true`). */
  replayed: boolean;
  rateLimitRemaining: number | null;
  /** The `User-Agent`, cut to `USER_AGENT_MAX_CHARS`. */
  userAgent: string | null;
}

/** A logged entry as read back: the entry and its row id (the keyset's tie-breaker). */
export interface StoredRequestLogEntry extends RequestLogEntry {
  id: string;
}

/** The `User-Agent` is kept to this many characters. */
export const USER_AGENT_MAX_CHARS = 200;

/**
 * Inserts `entries` in one statement (arrays unnested: one round trip whatever the count).
 * @throws the driver's error (the writer counts the batch as dropped; services/request-log/writer.ts).
 */
export async function insertRequestLogEntries(sql: SqlRunner, entries: readonly RequestLogEntry[]): Promise<void> {
  if (entries.length === 0) return;
  const col = <T>(f: (e: RequestLogEntry) => T) => entries.map(f);
  await sql.query(
    `insert into request_log (company_id, request_id, at, method, route, path_ids, status, code, error_paths, duration_ms,
       credential_type, credential_id, credential_name, idempotency_key, replayed, rate_limit_remaining, user_agent)
     select e.company_id, e.request_id, e.at, e.method, e.route, e.path_ids::jsonb, e.status, e.code,
       case when e.error_paths is null then null else array(select json_array_elements_text(e.error_paths::json)) end,
       e.duration_ms, e.credential_type, e.credential_id, e.credential_name, e.idempotency_key, e.replayed,
       e.rate_limit_remaining, e.user_agent
     from unnest($1::text[], $2::text[], $3::timestamptz[], $4::text[], $5::text[], $6::text[], $7::smallint[], $8::text[],
       $9::text[], $10::int[], $11::text[], $12::text[], $13::text[], $14::text[], $15::boolean[], $16::int[], $17::text[])
       as e(company_id, request_id, at, method, route, path_ids, status, code, error_paths, duration_ms, credential_type,
         credential_id, credential_name, idempotency_key, replayed, rate_limit_remaining, user_agent)`,
    [
      col((e) => e.companyId),
      col((e) => e.requestId),
      col((e) => e.at.toISOString()),
      col((e) => e.method),
      col((e) => e.route),
      col((e) => (e.pathIds ? JSON.stringify(e.pathIds) : null)),
      col((e) => e.status),
      col((e) => e.code),
      col((e) => (e.errorPaths ? JSON.stringify(e.errorPaths) : null)),
      col((e) => Math.max(0, Math.round(e.durationMs))),
      col((e) => e.credentialType),
      col((e) => e.credentialId),
      col((e) => e.credentialName),
      col((e) => e.idempotencyKey),
      col((e) => e.replayed),
      col((e) => e.rateLimitRemaining),
      col((e) => (e.userAgent === null ? null : e.userAgent.slice(0, USER_AGENT_MAX_CHARS))),
    ],
  );
}

/** Filters of the Requests page (all optional, combined with AND). */
export interface RequestLogFilter {
  /** 2 (2xx), 4 (4xx) or 5 (5xx). */
  statusClass?: number;
  credentialId?: string;
  /** An exact route template or tool name. */
  route?: string;
  /** Entries at or after. */
  from?: Date;
  /** Entries before. */
  until?: Date;
}

/** A keyset position: the last entry of the previous page (newest first). */
export interface RequestLogCursor {
  at: Date;
  id: string;
}

interface Row {
  id: string | number;
  company_id: string;
  request_id: string;
  at: Date;
  method: string;
  route: string;
  path_ids: Record<string, string> | null;
  status: number;
  code: string | null;
  error_paths: string[] | null;
  duration_ms: number;
  credential_type: "key" | "oauth";
  credential_id: string;
  credential_name: string | null;
  idempotency_key: string | null;
  replayed: boolean;
  rate_limit_remaining: number | null;
  user_agent: string | null;
}

const COLUMNS = `id::text as id, company_id, request_id, at, method, route, path_ids, status::int as status, code, error_paths,
  duration_ms, credential_type, credential_id, credential_name, idempotency_key, replayed, rate_limit_remaining, user_agent`;

function toEntry(r: Row): StoredRequestLogEntry {
  return {
    id: String(r.id),
    companyId: r.company_id,
    requestId: r.request_id,
    at: new Date(r.at),
    method: r.method,
    route: r.route,
    pathIds: r.path_ids,
    status: r.status,
    code: r.code,
    errorPaths: r.error_paths,
    durationMs: r.duration_ms,
    credentialType: r.credential_type,
    credentialId: r.credential_id,
    credentialName: r.credential_name,
    idempotencyKey: r.idempotency_key,
    replayed: r.replayed,
    rateLimitRemaining: r.rate_limit_remaining,
    userAgent: r.user_agent,
  };
}

/**
 * One page of a company's entries, newest first (keyset on `(at, id)`, never OFFSET): at most `limit` entries after
 * `cursor`. Each filter has an index that starts with the company (migration 20261208000000_request_log), so a page
 * is a bounded range scan whatever the company's volume; the route filter reads the unfiltered one.
 */
export async function listRequestLog(
  sql: SqlRunner,
  companyId: string,
  filter: RequestLogFilter,
  cursor: RequestLogCursor | null,
  limit: number,
): Promise<StoredRequestLogEntry[]> {
  const where = ["company_id = $1"];
  const params: unknown[] = [companyId];
  const add = (cond: (p: string) => string, value: unknown) => {
    params.push(value);
    where.push(cond(`$${params.length}`));
  };
  if (filter.statusClass !== undefined) add((p) => `status_class = ${p}::smallint`, filter.statusClass);
  if (filter.credentialId !== undefined) add((p) => `credential_id = ${p}`, filter.credentialId);
  if (filter.route !== undefined) add((p) => `route = ${p}`, filter.route);
  if (filter.from) add((p) => `at >= ${p}::timestamptz`, filter.from.toISOString());
  if (filter.until) add((p) => `at < ${p}::timestamptz`, filter.until.toISOString());
  if (cursor) {
    params.push(cursor.at.toISOString(), cursor.id);
    where.push(`(at, id) < ($${params.length - 1}::timestamptz, $${params.length}::bigint)`);
  }
  params.push(limit);
  const rows = await sql.query<Row>(
    `select ${COLUMNS} from request_log where ${where.join(" and ")} order by at desc, id desc limit $${params.length}`,
    params,
  );
  return rows.map(toEntry);
}

/** The company's entry with `requestId`, or undefined (another company's id reads as absent). */
export async function findRequestLogEntry(sql: SqlRunner, companyId: string, requestId: string): Promise<StoredRequestLogEntry | undefined> {
  const rows = await sql.query<Row>(`select ${COLUMNS} from request_log where request_id = $1 and company_id = $2 limit 1`, [requestId, companyId]);
  return rows[0] ? toEntry(rows[0]) : undefined;
}

/** The credentials (id, type and latest name) that called in the company since `since`, for the Requests filter. */
export async function requestLogCredentials(
  sql: SqlRunner,
  companyId: string,
  since: Date,
): Promise<{ credentialId: string; credentialType: "key" | "oauth"; credentialName: string | null }[]> {
  const rows = await sql.query<{ credential_id: string; credential_type: "key" | "oauth"; credential_name: string | null }>(
    `select distinct on (credential_id) credential_id, credential_type, credential_name
       from request_log where company_id = $1 and at >= $2::timestamptz order by credential_id, at desc limit 200`,
    [companyId, since.toISOString()],
  );
  return rows.map((r) => ({ credentialId: r.credential_id, credentialType: r.credential_type, credentialName: r.credential_name }));
}

/** Requests per hour and status class, for a chart: `hour` is the start of the UTC hour. */
export interface HourlyRequestCount {
  hour: Date;
  statusClass: number;
  count: number;
}

/**
 * The company's requests per hour by status class from `since` (optionally of one credential), from the log itself
 * (no second copy): a range scan of the company's (or the credential's) index over the window.
 */
export async function hourlyRequestCounts(sql: SqlRunner, companyId: string, since: Date, credentialId?: string): Promise<HourlyRequestCount[]> {
  const rows = await sql.query<{ hour: Date; status_class: number; n: number }>(
    `select date_trunc('hour', at) as hour, status_class::int as status_class, count(*)::int as n
       from request_log where company_id = $1 and at >= $2::timestamptz ${credentialId === undefined ? "" : "and credential_id = $3"}
      group by 1, 2 order by 1, 2`,
    credentialId === undefined ? [companyId, since.toISOString()] : [companyId, since.toISOString(), credentialId],
  );
  return rows.map((r) => ({ hour: new Date(r.hour), statusClass: r.status_class, count: r.n }));
}

/**
 * Deletes up to `batch` entries older than `before`, oldest first (the `at` index).
 * @returns how many were deleted.
 */
export async function purgeRequestLog(sql: SqlRunner, before: Date, batch: number): Promise<number> {
  const rows = await sql.query<{ n: number }>(
    `with gone as (delete from request_log where id in (select id from request_log where at < $1::timestamptz order by at limit $2) returning 1)
     select count(*)::int as n from gone`,
    [before.toISOString(), batch],
  );
  return rows[0]?.n ?? 0;
}
