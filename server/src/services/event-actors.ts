/**
 * Who causes a request's events (issue 40 item 5; the scope itself: db/event-actor.ts): the edges run a request's
 * work as the actor of its credential or its signed-in user, and every outbox event the request writes records it.
 */
import { runAsEventActor, type EventActor } from "../db/event-actor";
import type { AuthContext } from "./api-keys";
import type { SessionUser } from "./console-sessions";

export { runAsEventActor, type EventActor };

/** The actor of an authenticated API or MCP request: the API key by name, or the OAuth app (id: its grant's id). */
export function eventActorOfAuth(auth: AuthContext): EventActor {
  return auth.credential.kind === "oauth"
    ? { type: "oauth_app", id: auth.keyId, label: auth.credential.appName }
    : { type: "api_key", id: auth.keyId, label: auth.keyName };
}

/** The actor of a signed-in console user (labelled by email, as the audit log does). */
export function eventActorOfUser(user: Pick<SessionUser, "id" | "email">): EventActor {
  return { type: "user", id: user.id, label: user.email };
}
