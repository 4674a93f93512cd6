/**
 * A background job run now and then every `intervalMs` (the purges of expired idempotency keys and of OAuth records):
 * runs never overlap (a run asked for while one is in progress starts after it), a failed run is reported to `onError`
 * and counts 0, and the timer does not keep the process alive.
 */

/** A started periodic job. */
export interface PeriodicJob {
  /** Runs once more now (after a run in progress); resolves with what that run returned (0 after a failure). */
  runNow(): Promise<number>;
  /** Cancels the timer and waits for a run in progress. */
  stop(): Promise<void>;
}

/**
 * Starts `run` at once and then every `intervalMs` milliseconds.
 * @param run one run of the job; resolves with a count (e.g. rows deleted).
 * @param onError receives the error of a failed run (the job goes on; the next run tries again).
 */
export function startPeriodicJob(run: () => Promise<number>, onError: (err: unknown) => void, intervalMs: number): PeriodicJob {
  let running: Promise<number> = Promise.resolve(0);
  const runNow = () =>
    (running = running.then(run).catch((err: unknown) => {
      onError(err);
      return 0;
    }));
  void runNow();
  const timer = setInterval(() => void runNow(), intervalMs);
  timer.unref();
  return {
    runNow,
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}

/** Calls `step` until it returns 0 (a batch that deleted nothing); resolves with the sum of what it returned. */
export async function untilNone(step: () => Promise<number>): Promise<number> {
  let total = 0;
  for (let n = -1; n !== 0; total += n) n = await step();
  return total;
}
