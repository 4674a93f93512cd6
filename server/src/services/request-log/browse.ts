/**
 * Reading the request log for the console's Requests pages (issue 40; CONTRACT "Console: events, activity and
 * charts": "Requests: newest first; filters for status class, credential, route and time; a search box that takes a
 * Request-Id; a request's page shows all that was kept"). Every read is the caller's company's; another company's
 * Request-Id reads as not found.
 */
import type { SqlRunner } from "../../db/sql";
import {
  findRequestLogEntry,
  hourlyRequestCounts,
  listRequestLog,
  requestLogCredentials,
  type HourlyRequestCount,
  type RequestLogCursor,
  type RequestLogFilter,
  type StoredRequestLogEntry,
} from "../../db/request-log";
import { notFound } from "../errors";

/** Entries per page of the Requests list. */
export const REQUESTS_PAGE_SIZE = 50;
/** The shape of a Request-Id (http/request-id.ts). */
export const REQUEST_ID_PATTERN = /^req_[A-Za-z0-9_-]{22}$/;

/** A page of entries and the cursor of the next one (null on the last page). */
export interface RequestLogPage {
  entries: StoredRequestLogEntry[];
  next: string | null;
}

/** The opaque cursor of the page after `last`: `<at in ms>.<id>`. */
export function encodeRequestCursor(last: Pick<StoredRequestLogEntry, "at" | "id">): string {
  return `${last.at.getTime()}.${last.id}`;
}

/** The position a cursor names, or null for anything else (a bad cursor starts from the newest). */
export function decodeRequestCursor(cursor: string | undefined): RequestLogCursor | null {
  const m = /^(\d{1,15})\.(\d{1,19})$/.exec(cursor ?? "");
  return m ? { at: new Date(Number(m[1])), id: m[2]! } : null;
}

/**
 * One page of the company's entries, newest first, after `cursor` (from `encodeRequestCursor`).
 * @param filter the Requests page's filters (see `RequestLogFilter`).
 */
export async function browseRequests(sql: SqlRunner, companyId: string, filter: RequestLogFilter, cursor?: string): Promise<RequestLogPage> {
  const rows = await listRequestLog(sql, companyId, filter, decodeRequestCursor(cursor), REQUESTS_PAGE_SIZE + 1);
  const entries = rows.slice(0, REQUESTS_PAGE_SIZE);
  return { entries, next: rows.length > REQUESTS_PAGE_SIZE ? encodeRequestCursor(entries[entries.length - 1]!) : null };
}

/**
 * The company's entry of `requestId`.
 * @throws DomainError `not_found` when the company has none (another company's id included).
 */
export async function requestDetails(sql: SqlRunner, companyId: string, requestId: string): Promise<StoredRequestLogEntry> {
  const entry = REQUEST_ID_PATTERN.test(requestId) ? await findRequestLogEntry(sql, companyId, requestId) : undefined;
  if (!entry) throw notFound("Request", requestId);
  return entry;
}

/** The credentials that called in the company over the last `days` days (the credential filter's choices). */
export function recentCredentials(sql: SqlRunner, companyId: string, days = 14, now = new Date()) {
  return requestLogCredentials(sql, companyId, new Date(now.getTime() - days * 86_400_000));
}

/** Requests per hour by status class over the last `hours` hours (one credential's, or the company's). */
export function requestsPerHour(sql: SqlRunner, companyId: string, hours: number, credentialId?: string, now = new Date()): Promise<HourlyRequestCount[]> {
  const since = new Date(Math.floor(now.getTime() / 3_600_000) * 3_600_000 - (hours - 1) * 3_600_000);
  return hourlyRequestCounts(sql, companyId, since, credentialId);
}
