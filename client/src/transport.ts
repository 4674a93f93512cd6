/**
 * Runs one API call, attempt after attempt (CONTRACT "Client library"): each attempt waits at the client's
 * rate-limit gate, runs under its own `timeoutMs` (sending, the answer's headers and reading its body), and is
 * repeated per the retry policy: a 429 is waited out (`Retry-After`, else `RateLimit-Reset`, at least 1 s) without
 * counting against `maxRetries` until the waits the 429s asked for reach `maxRateLimitWaitMs`; network errors,
 * timeouts, 5xx and `409 idempotency_key_in_use` are retried (backoff with jitter, at least a `Retry-After` capped at
 * the longest backoff; never `RateLimit-Reset`), at most `maxRetries` times, only for a retry-safe call (a read, or a
 * request carrying an `Idempotency-Key`: every attempt builds the same request, so sends the same key). Nothing else
 * is retried.
 *
 * An attempt is one run of the caller's openapi-fetch call with this module's fetch: openapi-fetch builds the
 * Request, the fetch sends it as it is (no copy, no re-wrapped Response) and openapi-fetch reads and parses the
 * answer once. A retry runs the call again, so openapi-fetch builds a fresh Request (a body stream is read once).
 */
import { shouldRenewToken, type BearerAuth } from "./bearer-auth";
import { clock } from "./clock";
import { ConnectionError, InvalidResponseError } from "./errors";
import type { RateLimitGate } from "./rate-limit-gate";
import { backoffMs, isRetryableStatus, MAX_BACKOFF_MS, retryAfterMs } from "./retry-policy";

/** A fetch as openapi-fetch calls it, with the Request it built. */
export type FetchFn = (request: Request) => Promise<Response>;

/** What openapi-fetch returns for one call: the parsed body of a 2xx (`data`) or of an error answer (`error`). */
export interface FetchResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** One API call: runs the openapi-fetch call with the fetch it is given, and returns (or throws) what that did. */
export type CallRun<T> = (fetch: FetchFn) => Promise<FetchResult<T>>;

/** The transport's settings (the client's options). */
export interface TransportOptions {
  fetch: typeof globalThis.fetch;
  maxRetries: number;
  /** Time limit of one attempt, ms (> 0). */
  timeoutMs: number;
  maxRateLimitWaitMs: number;
  gate: RateLimitGate;
  /**
   * With an OAuth access token: each attempt sends `Authorization: Bearer <current token>`, and a 401
   * `invalid_token` challenge renews the token (when a refresh callback was given) and repeats the call once, unless
   * the token was issued for another resource (bearer-auth.ts `shouldRenewToken`).
   */
  bearer?: BearerAuth;
}

/** Sends calls for one client. */
export class Transport {
  constructor(private readonly options: TransportOptions) {}

  /**
   * Runs `run` until its answer is final.
   * @param retrySafe true for reads and for requests with an `Idempotency-Key`: only those are retried after
   * network errors, timeouts, 5xx and `409 idempotency_key_in_use`.
   * @returns the final result (a 2xx, or an error status that is not retried or outlasted the retries or the
   * rate-limit budget), its body read and parsed by openapi-fetch.
   * @throws ConnectionError (with `cause`) when a network error or timeout ends the call; InvalidResponseError when
   * a 2xx body is not JSON; whatever `run` throws before it sends anything (e.g. a body that cannot be serialised);
   * what the access token's refresh callback threw.
   */
  async call<T>(retrySafe: boolean, run: CallRun<T>): Promise<FetchResult<T>> {
    const { maxRetries, maxRateLimitWaitMs, gate } = this.options;
    let retries = 0;
    /** Rate-limit budget used: per wait, the longer of the time waited and what the 429 before it asked for. */
    let rateLimitUsedMs = 0;
    let askedMs = 0;
    /** Whether this call already renewed its access token (a 401 `invalid_token` is repeated once, never more). */
    let renewed = false;
    for (;;) {
      rateLimitUsedMs += Math.max(await gate.acquire(maxRateLimitWaitMs - rateLimitUsedMs), askedMs);
      askedMs = 0;
      const attempt = new Attempt(this.options);
      let result: FetchResult<T>;
      try {
        result = await attempt.run(run);
      } catch (err) {
        if (attempt.request === undefined) throw err;
        if (err instanceof SyntaxError && attempt.response?.ok) throw new InvalidResponseError(attempt.response, err);
        if (retrySafe && retries < maxRetries) {
          await clock.sleep(backoffMs(retries++));
          continue;
        }
        throw new ConnectionError(`${attempt.request.method} ${new URL(attempt.request.url).pathname} failed after ${retries + 1} attempt(s): ${describe(err)}`, { cause: err, headers: attempt.response?.headers });
      }
      const { response } = result;
      const bearer = this.options.bearer;
      if (bearer?.canRefresh && !renewed && attempt.token !== undefined && shouldRenewToken(response.status, response.headers, result.error)) {
        // The server refused the token before doing anything: safe to send again, with a fresh token, once.
        renewed = true;
        await bearer.renew(attempt.token);
        continue;
      }
      if (attempt.rateLimitWaitMs !== undefined) {
        if (rateLimitUsedMs + attempt.rateLimitWaitMs > maxRateLimitWaitMs) return result;
        askedMs = attempt.rateLimitWaitMs;
        continue;
      }
      if (retrySafe && retries < maxRetries && isRetryableStatus(response.status, problemCode(result.error))) {
        const asked = Math.min(retryAfterMs(response.headers, clock.now()) ?? 0, MAX_BACKOFF_MS);
        await clock.sleep(backoffMs(retries++, asked));
        continue;
      }
      return result;
    }
  }
}

/**
 * One attempt: the call run once with a fetch that sends its Request under this attempt's abort signal and tells
 * the gate what the answer's headers say. The whole run (headers and body) races the attempt's timer, so the time
 * limit holds even with a custom fetch that ignores `signal`.
 */
class Attempt {
  /** The request, once the run has handed it to the fetch (undefined: nothing sent). */
  request: Request | undefined;
  /** The answer, once its headers arrived. */
  response: Response | undefined;
  /** For a 429, the milliseconds the gate says to wait (RateLimitGate.observe). */
  rateLimitWaitMs: number | undefined;
  /** The access token this attempt sent (OAuth clients only). */
  token: string | undefined;

  constructor(private readonly options: TransportOptions) {}

  async run<T>(run: CallRun<T>): Promise<FetchResult<T>> {
    const { timeoutMs } = this.options;
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        const reason = new DOMException(`no answer within ${timeoutMs} ms`, "TimeoutError");
        controller.abort(reason);
        reject(reason);
      }, timeoutMs);
    });
    const fetch: FetchFn = async (request) => {
      this.request = request;
      const bearer = this.options.bearer;
      if (bearer) {
        this.token = bearer.current;
        request.headers.set("authorization", `Bearer ${this.token}`);
      }
      const response = await this.options.fetch(request, { signal: controller.signal });
      this.response = response;
      this.rateLimitWaitMs = this.options.gate.observe(response.status, response.headers);
      return response;
    };
    try {
      return await Promise.race([run(fetch), timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The problem `code` of an error answer's parsed body, or undefined. */
function problemCode(body: unknown): string | undefined {
  const code = body !== null && typeof body === "object" ? (body as { code?: unknown }).code : undefined;
  return typeof code === "string" ? code : undefined;
}

/** A one-line description of a fetch failure (undici hides the reason in `cause`). */
function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? ` (${err.cause.message})` : "";
  return `${err.message}${cause}`;
}
