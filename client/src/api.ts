/**
 * The typed HTTP layer every resource uses: an openapi-fetch client over the generated `paths` (so paths, path
 * parameters, queries and bodies are checked against the OpenAPI document at compile time), the three fetch
 * policies of the transport, and `unwrap`, which turns an error answer into the matching StagelineError.
 */
import { randomUUID } from "node:crypto";
import type { Client } from "openapi-fetch";
import { errorFromResponse } from "./errors";
import type { paths } from "./generated/openapi";
import { nextCursorFromLink, type Page } from "./pagination";

/** What a resource needs: the typed client and the fetch to use for each kind of call. */
export interface ApiContext {
  api: Client<paths>;
  /** Reads (and the duplicate check, which only reads): retried after network errors, timeouts and 5xx. */
  read: (request: Request) => Promise<Response>;
  /** Requests carrying an Idempotency-Key: retried like reads, every attempt with the same key. */
  keyed: (request: Request) => Promise<Response>;
  /** Other writes (update, unsubscribe, redeliver, rotate): sent once (429 waited out), never retried. */
  unkeyed: (request: Request) => Promise<Response>;
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

/** What openapi-fetch returns for one call. */
interface FetchResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
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
