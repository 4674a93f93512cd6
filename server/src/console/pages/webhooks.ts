/**
 * Outbound webhooks (issue 10, "Outbound webhooks page"): the company's endpoints and the REST hooks subscribed
 * through the API, each endpoint's delivery log and one delivery in detail, for everyone; adding, editing,
 * pausing, resuming, deleting, revealing and rotating the signing secret, sending a test event, resending a
 * delivery and replaying the failed deliveries of a time range (issue 31, CONTRACT "Events feed": the API's replay)
 * for admins and owners. The endpoint page charts its deliveries per hour by outcome and their latency over the last
 * 24 hours or 7 days (`?window=24h|7d`; issue 40 item 6, console/charts/). Thin: every handler parses the form, calls services/webhook-endpoints.ts with
 * the signed-in company, and redirects (post/redirect/get). A revealed secret travels in the one-time encrypted
 * notice (console/flash.ts), never in a URL.
 */
import { Router, type Request, type Response } from "express";
import { EVENT_NAMES, MAX_REPLAY_DELIVERIES, WebhookReplaySchema, parseInput, type WebhookReplay } from "@stageline/shared";
import type { AppContext } from "../../context";
import { DomainError } from "../../services/errors";
import {
  DELIVERY_OUTCOMES,
  EndpointInputSchema,
  createEndpoint,
  deleteEndpoint,
  getEndpoint,
  getEndpointDelivery,
  listEndpointDeliveries,
  listEndpoints,
  replayEndpointDeliveries,
  resendDelivery,
  revealSecret,
  rotateEndpointSecret,
  sendTestEvent,
  setEndpointPaused,
  updateEndpoint,
  type DeliveryOutcome,
  type EndpointManager,
  type EndpointRow,
} from "../../services/webhook-endpoints";
import { consoleDate, utcDateTime } from "../dates";
import { CHART_WINDOWS, endpointDeliveryChart, type ChartWindow } from "../../services/delivery-charts";
import { deliveriesChart, latencyChart } from "../charts/delivery-charts";
import { formErrors, type FieldError } from "../forms";
import { notify } from "../flash";
import { clientIp, signedIn } from "../request";
import { requireRole } from "../session";
import { renderPage } from "../views";

const OUTCOMES = Object.keys(DELIVERY_OUTCOMES) as DeliveryOutcome[];

function manager(req: Request): EndpointManager {
  const user = signedIn(req);
  return { actor: { type: "user", id: user.id, email: user.email }, companyId: user.company.id, ip: clientIp(req) };
}

/** A path parameter as one string. */
function param(req: Request, name: string): string {
  return String(req.params[name]);
}

function query(req: Request, name: string): string | undefined {
  const value = req.query[name];
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** The endpoint form as posted: `events` has one value per ticked box. */
interface EndpointForm {
  target_url: string;
  description: string;
  events: string[];
}

function postedForm(body: Record<string, unknown>): EndpointForm {
  const events = body.events === undefined ? [] : Array.isArray(body.events) ? body.events.map(String) : [String(body.events)];
  return {
    target_url: typeof body.target_url === "string" ? body.target_url : "",
    description: typeof body.description === "string" ? body.description : "",
    events,
  };
}

function formOf(row: EndpointRow): EndpointForm {
  return { target_url: row.targetUrl, description: row.description ?? "", events: row.events };
}

/** Field ids of the endpoint form: the URL and description inputs, and the first event checkbox. */
const FIELD_IDS: Record<string, string> = { target_url: "target_url", description: "description", events: `event-${EVENT_NAMES[0]}` };

/**
 * The field errors of a refused endpoint form (400 `validation_failed` or 422 `invalid_reference` listing fields);
 * rethrows anything else (the error page renders it).
 */
function endpointFormErrors(err: unknown): FieldError[] {
  if (!(err instanceof DomainError) || (err.code !== "validation_failed" && err.code !== "invalid_reference")) throw err;
  const listed = (err.extras as { errors?: { path: string; message: string }[] }).errors ?? [];
  if (!listed.length) return [{ field: FIELD_IDS.target_url!, message: err.detail }];
  return listed.map((e) => ({ field: FIELD_IDS[e.path.split(".")[0] ?? ""] ?? FIELD_IDS.target_url!, message: e.message }));
}

/**
 * Runs an action on an endpoint page and redirects back to it; a refusal the user can act on (422, e.g. a paused
 * endpoint's test event) becomes an error notice on that page instead of an error page.
 */
async function act(ctx: AppContext, req: Request, res: Response, back: string, action: () => Promise<string>): Promise<void> {
  try {
    await notify(ctx.prisma, req, { kind: "success", message: await action() });
  } catch (err) {
    if (!(err instanceof DomainError) || err.code !== "invalid_reference") throw err;
    await notify(ctx.prisma, req, { kind: "error", message: err.detail });
  }
  res.redirect(303, back);
}

/** The replay form as posted and shown again: `since` and `until` as typed (`datetime-local`: `YYYY-MM-DDTHH:MM`, UTC). */
interface ReplayForm {
  since: string;
  until: string;
}

/** Field ids of the replay form. */
const REPLAY_FIELDS: Record<string, string> = { since: "replay-since", until: "replay-until" };

function postedReplayForm(body: Record<string, unknown>): ReplayForm {
  const text = (v: unknown) => (typeof v === "string" ? v.trim() : "");
  return { since: text(body.since), until: text(body.until) };
}

/**
 * The replay of a posted form (shared `WebhookReplaySchema`: `since` required, `until` optional and after it; only
 * failed deliveries).
 * @throws DomainError 400 `validation_failed` naming `since` / `until`.
 */
function replayInput(form: ReplayForm): WebhookReplay {
  const body = { since: form.since === "" ? undefined : utcDateTime(form.since), ...(form.until === "" ? {} : { until: utcDateTime(form.until) }), only_failed: true };
  return parseInput(WebhookReplaySchema, body, "replay form");
}

/** The replay form's errors in the console's words (the contract's messages speak of fields of a JSON body). */
function replayFormErrors(err: unknown, form: ReplayForm): FieldError[] {
  return formErrors(err, REPLAY_FIELDS, REPLAY_FIELDS.since!).map(({ field, message }) => {
    const label = field === REPLAY_FIELDS.until ? "Until" : "Since";
    if (field === REPLAY_FIELDS.since && form.since === "") return { field, message: "Enter the date and time to replay from (UTC)." };
    if (/ISO 8601/.test(message)) return { field, message: `Enter ${label} as a date and time in UTC, e.g. 2026-11-20 09:00.` };
    if (/after since/.test(message)) return { field, message: "Until must be later than Since." };
    return { field, message };
  });
}

/** The flash message of a replay that queued `count` deliveries. */
function replayedMessage(count: number): string {
  if (count === 0) return "No failed deliveries in that time range: nothing was replayed.";
  const queued = `${count.toLocaleString("en-US")} failed ${count === 1 ? "delivery" : "deliveries"} queued to be sent again, oldest first, each with its original webhook-id.`;
  return count === MAX_REPLAY_DELIVERIES ? `${queued} That is the most one replay takes: replay again to queue the rest.` : queued;
}

function renderForm(req: Request, res: Response, data: { endpoint?: EndpointRow; form: EndpointForm; errors?: FieldError[] }): void {
  const title = data.endpoint ? "Edit webhook endpoint" : "Add a webhook endpoint";
  renderPage(req, res, "webhooks/form", { title, events: EVENT_NAMES, ...data, errors: data.errors ?? [] }, data.errors?.length ? 400 : 200);
}

/** The Webhooks section. */
export function webhooksRouter(ctx: AppContext): Router {
  const router = Router();
  const endpointPath = (id: string) => `/console/webhooks/${encodeURIComponent(id)}`;

  router.get("/webhooks", async (req, res) => {
    const cursor = query(req, "cursor");
    const page = await listEndpoints(ctx, signedIn(req).company.id, cursor);
    renderPage(req, res, "webhooks/list", { title: "Webhooks", endpoints: page.items, next: page.next, firstPage: !cursor });
  });

  router.get("/webhooks/new", requireRole("admin"), (req, res) => {
    renderForm(req, res, { form: { target_url: "", description: "", events: [] } });
  });

  router.post("/webhooks", requireRole("admin"), async (req, res) => {
    const form = postedForm(req.body ?? {});
    try {
      const endpoint = await createEndpoint(ctx, manager(req), parseInput(EndpointInputSchema, form, "endpoint form"));
      await notify(ctx.prisma, req, { kind: "success", message: `Webhook endpoint ${endpoint.targetUrl} added. Reveal its signing secret below to verify deliveries.` });
      res.redirect(303, endpointPath(endpoint.id));
    } catch (err) {
      renderForm(req, res, { form, errors: endpointFormErrors(err) });
    }
  });

  /**
   * The endpoint page (its delivery log filtered by `?outcome=`, paged by `?cursor=`; its charts over `?window=`, 24h
   * unless 7d), with the replay form as given.
   */
  const renderEndpoint = async (req: Request, res: Response, replay: ReplayForm, errors: FieldError[] = []) => {
    const requested = query(req, "outcome");
    const outcome = OUTCOMES.find((o) => o === requested);
    const cursor = query(req, "cursor");
    const requestedWindow = query(req, "window");
    const window: ChartWindow = requestedWindow === "7d" ? "7d" : "24h";
    const companyId = signedIn(req).company.id;
    const [deliveries, chart] = await Promise.all([
      listEndpointDeliveries(ctx, companyId, param(req, "id"), { outcome, cursor }),
      endpointDeliveryChart(ctx, companyId, param(req, "id"), window),
    ]);
    const endpoint = deliveries.endpoint;
    const charts = await Promise.all([deliveriesChart(chart.rows, chart, "endpoint"), latencyChart(chart.rows, chart, "endpoint")]);
    const page = {
      title: `Webhook endpoint ${endpoint.targetUrl}`,
      endpoint,
      health: deliveries.health,
      deliveries: deliveries.items,
      next: deliveries.next,
      outcome: outcome ?? "",
      outcomes: OUTCOMES,
      firstPage: !cursor,
      retentionDays: ctx.config.webhookRetentionDays,
      replay,
      maxReplay: MAX_REPLAY_DELIVERIES,
      charts,
      chartWindow: window,
      chartWindows: Object.keys(CHART_WINDOWS),
      errors,
    };
    renderPage(req, res, "webhooks/endpoint", page, errors.length ? 400 : 200);
  };

  router.get("/webhooks/:id", (req, res) => renderEndpoint(req, res, { since: "", until: "" }));

  router.get("/webhooks/:id/edit", requireRole("admin"), async (req, res) => {
    const endpoint = await getEndpoint(ctx, signedIn(req).company.id, param(req, "id"));
    renderForm(req, res, { endpoint, form: formOf(endpoint) });
  });

  router.post("/webhooks/:id", requireRole("admin"), async (req, res) => {
    const endpoint = await getEndpoint(ctx, signedIn(req).company.id, param(req, "id"));
    const form = postedForm(req.body ?? {});
    try {
      await updateEndpoint(ctx, manager(req), endpoint.id, parseInput(EndpointInputSchema, form, "endpoint form"));
      await notify(ctx.prisma, req, { kind: "success", message: "Webhook endpoint saved." });
      res.redirect(303, endpointPath(endpoint.id));
    } catch (err) {
      renderForm(req, res, { endpoint, form, errors: endpointFormErrors(err) });
    }
  });

  router.post("/webhooks/:id/pause", requireRole("admin"), (req, res) =>
    act(ctx, req, res, endpointPath(param(req, "id")), async () => {
      await setEndpointPaused(ctx, manager(req), param(req, "id"), true);
      return "Webhook endpoint paused: new events are not sent to it, and queued deliveries wait until you resume it.";
    }),
  );

  router.post("/webhooks/:id/resume", requireRole("admin"), (req, res) =>
    act(ctx, req, res, endpointPath(param(req, "id")), async () => {
      await setEndpointPaused(ctx, manager(req), param(req, "id"), false);
      return "Webhook endpoint resumed: queued deliveries are being sent.";
    }),
  );

  router.post("/webhooks/:id/test", requireRole("admin"), (req, res) =>
    act(ctx, req, res, endpointPath(param(req, "id")), async () => {
      const event = typeof req.body?.event === "string" && req.body.event !== "" ? req.body.event : undefined;
      const eventId = await sendTestEvent(ctx, signedIn(req).company.id, param(req, "id"), event);
      return `Test event sent (webhook-id ${eventId}). It appears in the delivery log below.`;
    }),
  );

  router.post("/webhooks/:id/reveal-secret", requireRole("admin"), async (req, res) => {
    const user = signedIn(req);
    const secret = await revealSecret(ctx, user.company.id, user.role, param(req, "id"));
    const previous = secret.previousSecretExpiresAt
      ? ` The previous secret also signs deliveries until ${consoleDate(secret.previousSecretExpiresAt)}.`
      : "";
    await notify(ctx.prisma, req, {
      kind: "success",
      message: `Signing secret of this endpoint.${previous} Verify the webhook-signature header of each delivery with it (Standard Webhooks).`,
      secret: { label: "Signing secret", value: secret.secret },
    });
    res.redirect(303, endpointPath(param(req, "id")));
  });

  router.post("/webhooks/:id/rotate-secret", requireRole("admin"), (req, res) =>
    act(ctx, req, res, endpointPath(param(req, "id")), async () => {
      await rotateEndpointSecret(ctx, manager(req), param(req, "id"));
      return "Signing secret rotated. Deliveries are signed with the new secret and, for the next 24 hours, with the old one too. Reveal the new secret to update your receiver.";
    }),
  );

  // "Replay failed deliveries since...": a form that cannot be read is shown again with its errors (400).
  router.post("/webhooks/:id/replay", requireRole("admin"), async (req, res) => {
    const form = postedReplayForm(req.body ?? {});
    let input: WebhookReplay;
    try {
      input = replayInput(form);
    } catch (err) {
      return renderEndpoint(req, res, form, replayFormErrors(err, form));
    }
    return act(ctx, req, res, `${endpointPath(param(req, "id"))}#deliveries`, async () =>
      replayedMessage(await replayEndpointDeliveries(ctx, manager(req), param(req, "id"), input)),
    );
  });

  router.get("/webhooks/:id/delete", requireRole("admin"), async (req, res) => {
    const endpoint = await getEndpoint(ctx, signedIn(req).company.id, param(req, "id"));
    renderPage(req, res, "webhooks/delete", { title: `Delete webhook ${endpoint.targetUrl}?`, endpoint });
  });

  router.post("/webhooks/:id/delete", requireRole("admin"), async (req, res) => {
    const endpoint = await deleteEndpoint(ctx, manager(req), param(req, "id"));
    await notify(ctx.prisma, req, { kind: "success", message: `Webhook ${endpoint.targetUrl} deleted. Nothing more is sent to it.` });
    res.redirect(303, "/console/webhooks");
  });

  router.get("/webhooks/:id/deliveries/:deliveryId", async (req, res) => {
    const { endpoint, delivery } = await getEndpointDelivery(ctx, signedIn(req).company.id, param(req, "id"), param(req, "deliveryId"));
    renderPage(req, res, "webhooks/delivery", {
      title: `Delivery of ${delivery.event.type}`,
      endpoint,
      delivery,
      body: JSON.stringify(delivery.event.payload, null, 2),
    });
  });

  router.post("/webhooks/:id/deliveries/:deliveryId/resend", requireRole("admin"), (req, res) =>
    act(ctx, req, res, `${endpointPath(param(req, "id"))}/deliveries/${encodeURIComponent(param(req, "deliveryId"))}`, async () => {
      await resendDelivery(ctx, signedIn(req).company.id, param(req, "id"), param(req, "deliveryId"));
      return "Delivery queued to be sent again.";
    }),
  );

  return router;
}
