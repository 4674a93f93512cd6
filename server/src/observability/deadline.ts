/** A deadline for operator checks (readiness, scrape-time readings): a hung database answers "no", not never. */

/** Thrown by `within` when the deadline passes first. */
export class DeadlineExceeded extends Error {
  constructor(readonly ms: number) {
    super(`no answer within ${ms} ms`);
    this.name = "DeadlineExceeded";
  }
}

/**
 * `work`, or a rejection with `DeadlineExceeded` after `ms` milliseconds, whichever settles first. The work itself
 * is not cancelled (a database statement is left to finish); the timer never keeps the process alive.
 */
export function within<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new DeadlineExceeded(ms)), ms);
    timer.unref();
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
