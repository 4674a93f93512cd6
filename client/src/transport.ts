/**
 * Sends one API call, attempt after attempt (CONTRACT "Client library"): each attempt waits at the client's
 * rate-limit gate, runs under its own `timeoutMs`, and is repeated per the retry policy: a 429 is waited out
 * (`Retry-After`, else `RateLimit-Reset`) without counting against `maxRetries` until the call has waited
 * `maxRateLimitWaitMs` in all; network errors, timeouts and 5xx are retried (backoff with jitter, at most
 * `maxRetries` times) only for a retry-safe call (a read, or a request carrying an `Idempotency-Key`: every attempt
 * sends the same request, so the same key). Nothing else is retried.
 */
import { clock } from "./clock";
import { ConnectionError } from "./errors";
import type { RateLimitGate } from "./rate-limit-gate";
import { backoffMs, isRetryableStatus, serverWaitMs } from "./retry-policy";

/** The transport's settings (the client's options). */
export interface TransportOptions {
  fetch: typeof globalThis.fetch;
  maxRetries: number;
  timeoutMs: number;
  maxRateLimitWaitMs: number;
  gate: RateLimitGate;
}

/** Statuses whose responses have no body (the Response constructor refuses one). */
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/** Sends calls for one client. */
export class Transport {
  constructor(private readonly options: TransportOptions) {}

  /**
   * A fetch function for one call (what openapi-fetch calls with the built Request).
   * @param retrySafe true for reads and for requests with an `Idempotency-Key`: only those are retried after
   * network errors, timeouts and 5xx.
   */
  fetcher(retrySafe: boolean): (request: Request) => Promise<Response> {
    return (request) => this.send(request, retrySafe);
  }

  /**
   * Sends `request` until an answer is final.
   * @returns the final answer with its body read (a 2xx, or an error status that is not retried or outlasted the
   * retries or the rate-limit budget).
   * @throws ConnectionError (with `cause`) when a network error or timeout ends the call.
   */
  async send(request: Request, retrySafe: boolean): Promise<Response> {
    const { maxRetries, maxRateLimitWaitMs, gate } = this.options;
    let retries = 0;
    let rateLimitWaitedMs = 0;
    for (;;) {
      rateLimitWaitedMs += await gate.acquire(maxRateLimitWaitMs - rateLimitWaitedMs);
      let response: Response;
      try {
        response = await this.attempt(request);
      } catch (err) {
        if (retrySafe && retries < maxRetries) {
          await clock.sleep(backoffMs(retries++));
          continue;
        }
        throw new ConnectionError(`${request.method} ${new URL(request.url).pathname} failed after ${retries + 1} attempt(s): ${describe(err)}`, { cause: err });
      }
      const rateLimitWaitMs = gate.observe(response.status, response.headers);
      if (rateLimitWaitMs !== undefined) {
        if (rateLimitWaitedMs + rateLimitWaitMs <= maxRateLimitWaitMs) continue;
        return response;
      }
      if (retrySafe && retries < maxRetries && isRetryableStatus(response.status, await problemCode(response))) {
        await clock.sleep(backoffMs(retries++, serverWaitMs(response.headers, clock.now()) ?? 0));
        continue;
      }
      return response;
    }
  }

  /** One attempt: a copy of the request, the whole answer read within `timeoutMs`. */
  private async attempt(request: Request): Promise<Response> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new DOMException(`no answer within ${this.options.timeoutMs} ms`, "TimeoutError")), this.options.timeoutMs);
    try {
      const answer = await this.options.fetch(new Request(request.clone(), { signal: controller.signal }));
      const body = NULL_BODY_STATUSES.has(answer.status) ? null : await answer.arrayBuffer();
      return new Response(body, { status: answer.status, statusText: answer.statusText, headers: answer.headers });
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The problem `code` of an error answer (its body already read), or undefined. */
async function problemCode(response: Response): Promise<string | undefined> {
  if (response.status !== 409) return undefined;
  try {
    const body = (await response.clone().json()) as { code?: unknown };
    return typeof body.code === "string" ? body.code : undefined;
  } catch {
    return undefined;
  }
}

/** A one-line description of a fetch failure (undici hides the reason in `cause`). */
function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? ` (${err.cause.message})` : "";
  return `${err.message}${cause}`;
}
