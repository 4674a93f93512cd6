/**
 * The events feed under /v1/ext (CONTRACT "Events feed (catch up without a public URL)"): GET /events and
 * GET /events/{event_id}, for keys with `items:read` or `tasks:read` (each sees the events its scopes read:
 * services/events-feed.ts). Thin: parse with the contract schema, call the service, set the `Link` header.
 */
import { Router } from "express";
import { EventListQuerySchema, parseInput, type FeedEvent } from "@stageline/shared";
import type { AppContext } from "../context";
import { authOf, requireScope } from "../http/auth";
import { setNextLink } from "../http/next-page-link";
import { getEvent, listEvents } from "../services/events-feed";

/** Path parameters of /events/:event_id. */
type EventPath = { event_id: string };

/** GET /events (newest first, or `after` an event oldest first; `Link: rel="next"`), GET /events/:event_id. */
export function eventsRouter(ctx: AppContext): Router {
  const router = Router();

  router.get("/events", requireScope("items:read", "tasks:read"), async (req, res) => {
    const query = parseInput(EventListQuerySchema, req.query, "query string");
    const auth = authOf(req);
    const page = await listEvents(ctx, auth.company.id, auth.scopes, query);
    if (page.next) setNextLink(req, res, { ...page.next, limit: String(query.limit) }, "after" in page.next ? ["cursor"] : ["after"]);
    const body: FeedEvent[] = page.events;
    res.json(body);
  });

  router.get<EventPath>("/events/:event_id", requireScope("items:read", "tasks:read"), async (req, res) => {
    const auth = authOf(req);
    const body: FeedEvent = await getEvent(ctx, auth.company.id, auth.scopes, req.params.event_id);
    res.json(body);
  });

  return router;
}
