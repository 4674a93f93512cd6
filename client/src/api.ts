/**
 * The typed HTTP layer every resource uses: an openapi-fetch client over the generated `paths` (so paths, path
 * parameters, queries and bodies are checked against the OpenAPI document at compile time), the three fetch
 * policies of the transport (each runs a call with its own fetch), and `unwrap`, which turns an error answer into the matching StagelineError.
 */
import { randomUUID } from "node:crypto";
import type { Client } from "openapi-fetch";
import { errorFromResponse } from "./errors";
import type { paths } from "./generated/openapi";
import { nextCursorFromLink, type Page } from "./pagination";
import type { CallRun, FetchResult } from "./transport";

/** Runs one call under a transport policy (Transport.call): the call gets the fetch to pass to openapi-fetch. */
export type Caller = <T>(run: CallRun<T>) => Promise<FetchResult<T>>;

/** What a resource needs: the typed client and the policy to run each kind of call under. */
export interface ApiContext {
  api: Client<paths>;
  /** Reads (and the duplicate check, which only reads): retried after network errors, timeouts and 5xx. */
  read: Caller;
  /** Requests carrying an Idempotency-Key: retried like reads, every attempt with the same key. */
  keyed: Caller;
  /** Other writes (update, unsubscribe, redeliver, rotate): sent once (429 waited out), never retried. */
  unkeyed: Caller;
}

/**
 * `id` when it is a non-blank string: an id goes into the path, and an empty one would address another resource
 * (`items/` is the list).
 * @throws TypeError when `id` is not a string or is empty or blank.
 */
export function requireId(name: string, id: string): string {
  if (typeof id !== "string" || id.trim() === "") throw new TypeError(`Stageline: \`${name}\` must be a non-empty id`);
  return id;
}

/** Per-call options of a create. */
export interface CreateOptions {
  /**
   * The `Idempotency-Key` (1..255 printable ASCII characters). Default: a random UUID generated once for this call
   * and sent by all its attempts. Pass your own (e.g. derived from a source row) to make re-running a script safe.
   */
  idempotencyKey?: string;
}

/** The key a create sends: the caller's, else a new random UUID. */
export function idempotencyKeyOf(options: CreateOptions | undefined): string {
  return options?.idempotencyKey ?? randomUUID();
}

/**
 * The body of a successful answer.
 * @throws StagelineError (the subclass for the status) when the answer is an error.
 */
export async function unwrap<T>(call: Promise<FetchResult<T>>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw errorFromResponse({ status: response.status, body: error, headers: response.headers });
  return data as T;
}

/**
 * One page of a list answer: the array body and the cursor of its `Link: rel="next"` URL.
 * @throws StagelineError when the answer is an error.
 */
export async function unwrapPage<T>(call: Promise<FetchResult<T[]>>): Promise<Page<T>> {
  const result = await call;
  const data = await unwrap(Promise.resolve(result));
  return { data, nextCursor: nextCursorFromLink(result.response.headers.get("link")) };
}
