/**
 * Developers, Events (CONTRACT "Console: events, activity and charts"): the company's events feed, newest first, with
 * its filters (event, item/task/note id, time range in UTC), and an event's page: its body (or that it was erased)
 * and every delivery of it to each endpoint, with attempts, status, latency and next try, and "Resend" for owners
 * and admins (members read only: no button, and a forged POST is 403). Thin: every handler parses the query or form,
 * calls services/developer-events.ts with the signed-in company, and renders or redirects (post/redirect/get).
 */
import { Router, type Request } from "express";
import { EVENT_NAMES, NAME_MAX } from "@stageline/shared";
import type { AppContext } from "../../context";
import { DomainError } from "../../services/errors";
import {
  ATTEMPTS_PER_DELIVERY,
  getCompanyEvent,
  listCompanyEvents,
  parseEventFilter,
  resendEventDelivery,
  type EventFilter,
} from "../../services/developer-events";
import { utcDateTime } from "../dates";
import { notify } from "../flash";
import { formErrors, type FieldError } from "../forms";
import { signedIn } from "../request";
import { requireRole } from "../session";
import { renderPage } from "../views";

/** The filter form as typed (shown again as typed); times as a `datetime-local` input posts them, in UTC. */
interface FilterForm {
  event: string;
  resource_id: string;
  since: string;
  until: string;
}

/** Field ids of the filter form, by the filter's field names. */
const FILTER_FIELDS: Record<keyof FilterForm, string> = {
  event: "filter-event",
  resource_id: "filter-resource",
  since: "filter-since",
  until: "filter-until",
};

/** A query parameter as one trimmed string ("" when absent or repeated). */
function queryText(req: Request, name: string): string {
  const value = req.query[name];
  return typeof value === "string" ? value.trim() : "";
}

function filterForm(req: Request): FilterForm {
  return { event: queryText(req, "event"), resource_id: queryText(req, "resource_id"), since: queryText(req, "since"), until: queryText(req, "until") };
}

/** The filter of a typed form (empty fields are no filter). @throws DomainError 400 `validation_failed`. */
function filterOf(form: FilterForm): EventFilter {
  const given = (v: string) => (v === "" ? undefined : v);
  return parseEventFilter({
    event: given(form.event),
    resource_id: given(form.resource_id),
    since: form.since === "" ? undefined : utcDateTime(form.since),
    until: form.until === "" ? undefined : utcDateTime(form.until),
  });
}

/** The filter's errors in the console's words (the contract's messages speak of fields of a JSON body). */
function filterErrors(err: unknown): FieldError[] {
  return formErrors(err, FILTER_FIELDS, FILTER_FIELDS.event).map(({ field, message }) => {
    if (field === FILTER_FIELDS.since || field === FILTER_FIELDS.until) {
      const label = field === FILTER_FIELDS.since ? "From" : "Before";
      if (/after since/.test(message)) return { field, message: "Before must be later than From." };
      return { field, message: `Enter ${label} as a date and time in UTC, e.g. 2026-11-20 09:00.` };
    }
    if (field === FILTER_FIELDS.resource_id) return { field, message: `Enter an item, task or note id of at most ${NAME_MAX} characters, or leave it empty.` };
    if (field === FILTER_FIELDS.event) return { field, message: "Choose an event from the list." };
    return { field, message };
  });
}

/** The query string of a filter form (only the fields set), to carry it to the next page. */
function filterQuery(form: FilterForm): string {
  return new URLSearchParams(Object.entries(form).filter(([, v]) => v !== "")).toString();
}

/** The Developers part's Events pages. */
export function eventsRouter(ctx: AppContext): Router {
  const router = Router();
  const eventPath = (id: string) => `/console/events/${encodeURIComponent(id)}`;

  router.get("/events", async (req, res) => {
    const form = filterForm(req);
    const cursor = queryText(req, "cursor") || undefined;
    const data = { title: "Events", form, eventNames: EVENT_NAMES, filterQuery: filterQuery(form), firstPage: !cursor, retentionDays: ctx.config.webhookRetentionDays };
    let filter: EventFilter;
    try {
      filter = filterOf(form);
    } catch (err) {
      return renderPage(req, res, "events/list", { ...data, events: [], next: null, errors: filterErrors(err) }, 400);
    }
    const page = await listCompanyEvents(ctx, signedIn(req).company.id, filter, cursor);
    renderPage(req, res, "events/list", { ...data, events: page.events, next: page.next, filtered: filterQuery(form) !== "" });
  });

  router.get("/events/:eventId", async (req, res) => {
    const after = queryText(req, "deliveries") || undefined;
    const detail = await getCompanyEvent(ctx, signedIn(req).company.id, String(req.params.eventId), after);
    renderPage(req, res, "events/event", {
      title: `Event ${detail.event.type}`,
      ...detail,
      body: JSON.stringify(detail.event.payload, null, 2),
      firstPage: !after,
      attemptsShown: ATTEMPTS_PER_DELIVERY,
    });
  });

  router.post("/events/:eventId/deliveries/:deliveryId/resend", requireRole("admin"), async (req, res) => {
    const eventId = String(req.params.eventId);
    const deliveryId = String(req.params.deliveryId);
    try {
      await resendEventDelivery(ctx, signedIn(req).company.id, eventId, deliveryId);
      await notify(ctx.prisma, req, { kind: "success", message: "Delivery queued to be sent again, with the same webhook-id." });
    } catch (err) {
      // What the user can act on is a notice on the event's page; an unknown event or delivery is the 404 page.
      if (!(err instanceof DomainError) || (err.code !== "payload_erased" && err.code !== "invalid_reference")) throw err;
      const message = err.code === "payload_erased" ? "This delivery cannot be sent again: its item or note was deleted and the event's body was erased with it." : err.detail;
      await notify(ctx.prisma, req, { kind: "error", message });
    }
    res.redirect(303, `${eventPath(eventId)}#delivery-${encodeURIComponent(deliveryId)}`);
  });

  return router;
}
