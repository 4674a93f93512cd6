/**
 * Throttled dispatcher wake-ups for a run of writes that each commit on their own (services/batch.ts, a non-atomic
 * batch: CONTRACT "Batch writes"). Alone, every write that commits outbox events wakes the webhook dispatcher right
 * after (`AppContext.eventsCommitted`: a claim cycle, and on PostgreSQL a `NOTIFY` to the other processes); a
 * hundred writes in a row would pay that a hundred times, more than their own statements. Throttled, the first
 * wake-up is sent at once and later ones at most every `everyMs` (the last one held back by a timer), and `flush`
 * sends a held-back one at once when the run ends. A delivery then starts at most `everyMs` later than alone; which
 * events and deliveries exist, and their order, do not depend on wake-ups at all.
 */

/** A throttled `wake` and the `flush` to call once the run has ended (in a `finally`). */
export interface ThrottledWakes {
  wake: () => void;
  flush: () => void;
}

/**
 * Throttles `wake` (see the module comment).
 * @param everyMs the least time between two wake-ups sent, in ms.
 * @param now the clock (ms), for tests.
 */
export function throttleWakes(wake: () => void, everyMs: number, now: () => number = () => performance.now()): ThrottledWakes {
  let last = -Infinity;
  let pending = false;
  let timer: NodeJS.Timeout | null = null;
  const fire = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    pending = false;
    last = now();
    wake();
  };
  return {
    wake: () => {
      const wait = last + everyMs - now();
      if (wait <= 0) return fire();
      pending = true;
      timer ??= setTimeout(fire, wait);
    },
    flush: () => {
      if (pending) fire();
    },
  };
}
