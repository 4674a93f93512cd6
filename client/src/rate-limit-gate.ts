/**
 * What one client knows about the server's rate-limit window (CONTRACT "Scopes and limits": per API key, fixed
 * windows, IETF `RateLimit-Limit` / `-Remaining` / `-Reset` on every answer, `Retry-After` on a 429), shared by all
 * concurrent calls of that client so a burst queues instead of failing: a call takes one of the remaining requests
 * before it is sent, and waits for the window's reset when none is left or after a 429.
 */
import { clock } from "./clock";
import { rateLimitWaitMs } from "./retry-policy";

/** Longest single wait for news when the window's end is unknown, in milliseconds. */
const UNKNOWN_RESET_POLL_MS = 1_000;
/**
 * Shortest wait after a 429, in milliseconds: a `Retry-After: 0` or a date in the past must not send the next
 * attempt at once (the server just refused; without a floor a call would spin through 429s without ever waiting).
 */
export const MIN_RATE_LIMIT_WAIT_MS = 1_000;
/** Two resets this close (ms) belong to the same window (the header has whole seconds). */
const SAME_WINDOW_SLACK_MS = 1_500;

/** The window state shared by the calls of one client. */
export class RateLimitGate {
  /** Requests per window (RateLimit-Limit), once the server said. */
  private limit: number | null = null;
  /** Requests left in the current window as far as this client knows (null: unknown, send). */
  private remaining: number | null = null;
  /** When the current window ends (ms since the epoch; 0: unknown). */
  private resetAt = 0;
  /** No request leaves before this time (ms since the epoch), after a 429. */
  private pausedUntil = 0;
  private wake: () => void = () => {};
  private news: Promise<void> = this.nextNews();

  /**
   * Waits until a request may be sent and takes one of the window's remaining requests.
   * @param budgetMs the longest this call may still wait for the rate limit; when it is used up the request is sent
   * anyway (the server's 429 then ends the call with a RateLimitError).
   * @returns the milliseconds waited.
   */
  async acquire(budgetMs: number): Promise<number> {
    const started = clock.now();
    for (;;) {
      const now = clock.now();
      const waited = now - started;
      if (this.resetAt !== 0 && now >= this.resetAt && now >= this.pausedUntil) {
        this.remaining = this.limit;
        this.resetAt = 0;
      }
      let until: number | null = null;
      if (this.pausedUntil > now) until = this.pausedUntil;
      else if (this.remaining !== null && this.remaining <= 0) until = this.resetAt || now + UNKNOWN_RESET_POLL_MS;
      if (until === null || waited >= budgetMs) {
        if (this.remaining !== null) this.remaining--;
        return waited;
      }
      const ms = Math.min(until - now, budgetMs - waited);
      await Promise.race([clock.sleep(ms), this.pausedUntil > now ? new Promise<void>(() => {}) : this.news]);
    }
  }

  /**
   * Learns from an answer's headers: the limit, what remains and when the window ends; on a 429 no request of this
   * client leaves before `Retry-After` (else `RateLimit-Reset`).
   * @param status the answer's HTTP status.
   * @param headers the answer's headers.
   * @returns for a 429, the milliseconds the server asked to wait (`Retry-After`, else `RateLimit-Reset`), at least
   * MIN_RATE_LIMIT_WAIT_MS (also when it did not say); otherwise undefined.
   */
  observe(status: number, headers: Headers): number | undefined {
    const now = clock.now();
    const limit = intHeader(headers, "ratelimit-limit");
    const remaining = intHeader(headers, "ratelimit-remaining");
    const reset = intHeader(headers, "ratelimit-reset");
    if (limit !== null) this.limit = limit;
    if (remaining !== null && reset !== null) {
      const resetAt = now + reset * 1000;
      if (this.resetAt === 0 || Math.abs(resetAt - this.resetAt) <= SAME_WINDOW_SLACK_MS) {
        // The window this client is counting in (after a reset it counts from the limit before the first answer
        // says when the new window ends): the lower count wins, as requests of this client are still in flight.
        this.remaining = this.remaining === null ? remaining : Math.min(this.remaining, remaining);
        if (this.resetAt === 0) this.resetAt = resetAt;
      } else if (resetAt > this.resetAt) {
        // A later window than the one this client knew of.
        this.remaining = remaining;
        this.resetAt = resetAt;
      }
    }
    let wait: number | undefined;
    if (status === 429) {
      wait = Math.max(MIN_RATE_LIMIT_WAIT_MS, rateLimitWaitMs(headers, now) ?? 0);
      this.pausedUntil = Math.max(this.pausedUntil, now + wait);
      this.remaining = 0;
      this.resetAt = Math.max(this.resetAt, this.pausedUntil);
    }
    const wake = this.wake;
    this.news = this.nextNews();
    wake();
    return wait;
  }

  private nextNews(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.wake = resolve;
    });
  }
}

/** A non-negative integer header, or null. */
function intHeader(headers: Headers, name: string): number | null {
  const raw = headers.get(name);
  if (raw === null || !/^\s*\d+\s*$/.test(raw)) return null;
  return Number(raw);
}
