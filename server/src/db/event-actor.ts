/**
 * Who causes the events a request writes (issue 40 item 5, CONTRACT "Console: events, activity and charts": an item's
 * Activity names who did each change: an API key, an OAuth app or a console user).
 *
 * The edges that authenticate a request (the API's `requireAuth`, the MCP edge, the console's signed-in guard) run
 * the rest of the request inside `runAsEventActor`; every statement that inserts outbox events reads the actor with
 * `currentEventActor` when it builds its parameters (db/outbox.ts `eventParams`), and stores it beside each event
 * (`webhook_events.actor_type`, `actor_id`, `actor_label`). An AsyncLocalStorage scope rather than a parameter through
 * every service: the events are written by a dozen write paths (creates, updates, upserts, batches, deletions, notes)
 * that all run inside one request, and a grouped write (db/write-groups.ts) reads each member's actor when that
 * member builds its parameters, in its own request's scope.
 *
 * Outside any scope (test fixtures, background jobs) the actor is null and the events store none ("unknown").
 */
import { AsyncLocalStorage } from "node:async_hooks";

/** A recorded actor: what `webhook_events` stores about who caused an event. */
export interface EventActor {
  /** `api_key`, `oauth_app` (an app connected with OAuth) or `user` (a console user). */
  type: "api_key" | "oauth_app" | "user";
  /** The API key's id, the OAuth grant's id, or the user's id. */
  id: string;
  /** The key's or app's name, or the user's name (else email), as it is now: kept even if it is later renamed or deleted. */
  label: string;
}

/** The actor types stored in `webhook_events.actor_type`. */
export const EVENT_ACTOR_TYPES: readonly EventActor["type"][] = ["api_key", "oauth_app", "user"];

const scope = new AsyncLocalStorage<EventActor>();

/** Runs `work` (and everything it awaits or schedules) with `actor` as the cause of the events it writes. */
export function runAsEventActor<R>(actor: EventActor, work: () => R): R {
  return scope.run(actor, work);
}

/** The actor of the current scope (`runAsEventActor`), or null outside one. */
export function currentEventActor(): EventActor | null {
  return scope.getStore() ?? null;
}
