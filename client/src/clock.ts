/**
 * The client's notion of time, in one replaceable place: `now()` in milliseconds since the epoch and `sleep(ms)`.
 * Retry backoff and rate-limit waits go through it, so tests can replace it with a virtual clock instead of waiting.
 */
export const clock = {
  /** Milliseconds since the epoch. */
  now(): number {
    return Date.now();
  },
  /** Resolves after `ms` milliseconds (0 or less: on the next macrotask). */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
  },
};
