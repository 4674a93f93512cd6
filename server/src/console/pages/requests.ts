/**
 * The console's Requests pages (issue 40; CONTRACT "Console: events, activity and charts"): GET /requests, the
 * company's request log newest first with filters (status class, credential, route, time) and a search box taking a
 * Request-Id; GET /requests/:requestId, all that was kept of one request. Every member reads them (read only);
 * another company's Request-Id is 404.
 */
import { Router } from "express";
import type { AppContext } from "../../context";
import type { RequestLogFilter } from "../../db/request-log";
import { browseRequests, recentCredentials, requestDetails, REQUEST_ID_PATTERN } from "../../services/request-log/browse";
import { signedIn } from "../request";
import { renderPage } from "../views";

/** The status classes the filter offers. */
const STATUS_CLASSES = [2, 3, 4, 5] as const;

/** A `YYYY-MM-DDTHH:mm` value of a datetime-local field, read as UTC; undefined for anything else. */
function utcMinute(value: unknown): Date | undefined {
  if (typeof value !== "string" || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(value)) return undefined;
  const d = new Date(`${value}:00Z`);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

/** The filter of the query string: unknown or malformed values are ignored (bounded: at most 200 characters each). */
export function requestFilterOf(query: Record<string, unknown>): { filter: RequestLogFilter; values: Record<string, string> } {
  const text = (name: string) => (typeof query[name] === "string" ? (query[name] as string).slice(0, 200) : "");
  const values = { status: text("status"), credential: text("credential"), route: text("route"), from: text("from"), until: text("until") };
  const filter: RequestLogFilter = {};
  const cls = Number(values.status);
  if ((STATUS_CLASSES as readonly number[]).includes(cls)) filter.statusClass = cls;
  if (values.credential) filter.credentialId = values.credential;
  if (values.route) filter.route = values.route;
  const from = utcMinute(values.from);
  const until = utcMinute(values.until);
  if (from) filter.from = from;
  if (until) filter.until = until;
  return { filter, values };
}

/** The Requests section. */
export function requestsRouter(ctx: AppContext): Router {
  const router = Router();
  router.get("/requests", async (req, res) => {
    const companyId = signedIn(req).company.id;
    const search = typeof req.query.request_id === "string" ? req.query.request_id.trim().slice(0, 100) : "";
    if (search && REQUEST_ID_PATTERN.test(search)) return res.redirect(303, `/console/requests/${encodeURIComponent(search)}`);
    const { filter, values } = requestFilterOf(req.query as Record<string, unknown>);
    const cursor = typeof req.query.cursor === "string" ? req.query.cursor.slice(0, 60) : undefined;
    const [page, credentials] = await Promise.all([browseRequests(ctx.db.sql, companyId, filter, cursor), recentCredentials(ctx.db.sql, companyId)]);
    const query = new URLSearchParams(Object.entries(values).filter(([, v]) => v !== ""));
    renderPage(req, res, "requests/list", {
      title: "Requests",
      entries: page.entries,
      nextCursor: page.next,
      firstPage: !cursor,
      credentials,
      statusClasses: STATUS_CLASSES,
      values,
      search,
      searchInvalid: search !== "",
      filterQuery: query.toString(),
    });
  });
  router.get("/requests/:requestId", async (req, res) => {
    const entry = await requestDetails(ctx.db.sql, signedIn(req).company.id, String(req.params.requestId));
    renderPage(req, res, "requests/show", { title: `Request ${entry.requestId}`, entry });
  });
  return router;
}
