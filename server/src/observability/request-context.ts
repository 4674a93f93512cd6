/**
 * The request a piece of code runs for (CONTRACT "Request ids and the request log"): its `Request-Id` and the
 * `Idempotency-Key` it carried, kept in an AsyncLocalStorage by the HTTP edge (http/request-id.ts) so that layers
 * without HTTP types (the data layer writing events, the request log) can name it. Outside a request (the webhook
 * dispatcher, the admin CLI, background jobs) there is none.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { randomBytes } from "node:crypto";

/** What is known of the current request. `idempotencyKey` is set once the edge has read a valid header. */
export interface RequestContext {
  /** `req_` and 22 base64url characters (128 random bits): opaque, unique. */
  readonly id: string;
  idempotencyKey: string | null;
  /** The problem the response carried (its `code` and `errors[].path`, never values), once one was sent. */
  problem?: { code: string | null; paths: string[] | null };
}

const storage = new AsyncLocalStorage<RequestContext>();

/** A new request id: `req_` + 16 random bytes in base64url (22 characters). */
export function newRequestId(): string {
  return `req_${randomBytes(16).toString("base64url")}`;
}

/** Runs `fn` as the request `context` (everything it awaits sees it through `currentRequest`). */
export function runInRequest<T>(context: RequestContext, fn: () => T): T {
  return storage.run(context, fn);
}

/** The request the calling code runs for, or undefined outside one. */
export function currentRequest(): RequestContext | undefined {
  return storage.getStore();
}
