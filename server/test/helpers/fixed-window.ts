/**
 * Tests that count requests against a limit, and the fixed windows the limits count in. Every limiter of the server
 * (the API's per key and per grant, the console's failure limits, the OAuth endpoints' per IP) counts in windows of
 * `windowMs` aligned to the epoch (http/rate-limit.ts `DatabaseRateLimitStore.windowStart`:
 * `floor(now / windowMs) * windowMs`). When a window boundary passes among a test's counted requests, the counts split
 * between two windows and the request meant to be over the limit is counted 1 and let through; the test then fails
 * for no fault of the server. Two ways to keep a phase in one window (times from this process's clock, the one the
 * server reads: in-process servers and child processes of the same machine):
 *
 * - `awayFromWindowEnd`: for a phase much shorter than the window (the API's 60-second windows, or any short phase):
 *   wait for the next window when too little of the current one is left. Costs up to `neededMs` of waiting.
 * - `withinOneWindow`: for long windows (15 minutes, hours), where waiting is not an option: run the phase, and run it
 *   once more, on fresh counters, when a boundary passed while it ran.
 */

/** Milliseconds left in the fixed window of `windowMs` that contains `now`. */
export function msLeftInWindow(windowMs: number, now = Date.now()): number {
  return windowMs - (now % windowMs);
}

/**
 * Waits, when fewer than `neededMs` are left in the current fixed window of `windowMs`, until 100 ms into the next
 * one, so that a phase lasting less than `neededMs` that starts now falls in one window. Call it right before the
 * phase's first counted request (not before slow setup). `neededMs` should be many times the phase's duration on a
 * loaded machine; it must be below `windowMs`.
 */
export async function awayFromWindowEnd(windowMs: number, neededMs: number): Promise<void> {
  if (neededMs >= windowMs) throw new Error(`awayFromWindowEnd: ${neededMs} ms needed of a ${windowMs} ms window`);
  const left = msLeftInWindow(windowMs);
  if (left < neededMs) await new Promise((resolve) => setTimeout(resolve, left + 100));
}

/**
 * Runs `phase` (which counts requests against a limit of windows of `windowMs`) so that all its requests fall in one
 * window. `phase(attempt)` makes its requests and returns the checks that depend on the counts; checks that hold
 * whatever the window (a request under the limit passes) may stay inside it. When a boundary passed while it ran,
 * the counts were split, so its checks are dropped and it runs once more (`attempt` 1): it must then use fresh
 * counters (other accounts, keys, addresses). A phase lasting far less than a window cannot straddle two boundaries.
 */
export async function withinOneWindow(windowMs: number, phase: (attempt: number) => Promise<() => Promise<void>>): Promise<void> {
  const windowOf = (ms: number) => Math.floor(ms / windowMs);
  for (let attempt = 0; ; attempt++) {
    const started = Date.now();
    const check = await phase(attempt);
    if (windowOf(started) === windowOf(Date.now()) || attempt > 0) return check();
  }
}
