/**
 * The background job that applies the retention policy of the webhook delivery log (retention-policy.ts; CONTRACT
 * "Events and deliveries", Retention), started and stopped with the server like the idempotency-key purge.
 *
 * A run deletes ended deliveries (and their attempts) batch after batch until none old enough is left, then walks the
 * old events once and deletes those no delivery references. Every batch is one short statement of its own, and the
 * run gives the event loop (and, on PGlite, the single connection) back between batches, so the API and the
 * dispatcher are never kept waiting for more than one batch. Several processes on one PostgreSQL run it side by side:
 * the batches skip rows another process has locked.
 */
import type { PrismaClient } from "../generated/prisma/client";
import { eraseFinishedDeletedItemEvents } from "../db/event-erasure";
import { purgeEndedDeliveries, purgeUnreferencedEvents, type EventCursor } from "../db/webhook-retention";
import { retentionCutoff, type WebhookRetentionPolicy } from "./retention-policy";

/** The kinds of rows the job deletes. */
export type PurgedKind = "deliveries" | "attempts" | "events";

/** Rows deleted by one run, per kind. */
export type PurgeCounts = Record<PurgedKind, number>;

/** Where the job reports to. */
export interface RetentionReporter {
  /** Called after each batch that deleted rows: `n` (> 0) rows of `kind` are gone (e.g. to count them in metrics). */
  onPurged?(kind: PurgedKind, n: number): void;
  /** Called once per run that deleted anything, with the run's totals and the cutoff (a log line). */
  onSummary?(counts: PurgeCounts, cutoff: Date): void;
  /** Called when a run fails; the next run tries again. */
  onError(err: unknown): void;
}

/** A started retention job. */
export interface RetentionJob {
  /** Runs once more now (after a run in progress) and resolves with that run's counts (all 0 after a failure). */
  runNow(): Promise<PurgeCounts>;
  /** Cancels the timer, ends a run in progress after its current batch, and waits for it. */
  stop(): Promise<void>;
}

/** Lets queued queries (the API's, the dispatcher's) in before the next batch. */
const yieldToOthers = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Deletes everything the policy says is old at `now`, batch by batch, reporting each batch to `onPurged`.
 * @param shouldStop checked between batches; the run ends early (nothing half done) when it returns true.
 * @returns the rows deleted per kind.
 * @throws the database's error; rows deleted by earlier batches stay deleted.
 */
export async function purgeWebhookLog(
  prisma: PrismaClient,
  policy: WebhookRetentionPolicy,
  now: Date,
  report: Pick<RetentionReporter, "onPurged"> = {},
  shouldStop: () => boolean = () => false,
): Promise<PurgeCounts> {
  const cutoff = retentionCutoff(now, policy);
  const counts: PurgeCounts = { deliveries: 0, attempts: 0, events: 0 };
  const add = (kind: PurgedKind, n: number) => {
    if (n <= 0) return;
    counts[kind] += n;
    report.onPurged?.(kind, n);
  };
  // CONTRACT "Item deletion and erasure": the safety net for item.deleted bodies whose last delivery ended without
  // the dispatcher erasing them (a crash in between, a subscription deleted): erase them now.
  for (let more = true; more && !shouldStop(); ) {
    more = (await eraseFinishedDeletedItemEvents(prisma, null, policy.batchSize)) === policy.batchSize;
    if (more) await yieldToOthers();
  }
  // Deliveries first: their events can go only once no delivery references them.
  for (let more = true; more && !shouldStop(); ) {
    const batch = await purgeEndedDeliveries(prisma, cutoff, policy.batchSize);
    add("deliveries", batch.deliveries);
    add("attempts", batch.attempts);
    more = batch.deliveries === policy.batchSize;
    if (more) await yieldToOthers();
  }
  let after: EventCursor | null = null;
  while (!shouldStop()) {
    const batch = await purgeUnreferencedEvents(prisma, cutoff, after, policy.batchSize);
    add("events", batch.events);
    if (!batch.next) break;
    after = batch.next;
    await yieldToOthers();
  }
  return counts;
}

/**
 * Starts the retention job: a run now and then every `policy.intervalMs`, in the background (the timer does not keep
 * the process alive). Runs never overlap within a process, and a tick is skipped while a run is still going. A failed
 * run is reported to `onError` and tried again at the next interval.
 */
export function startWebhookRetention(
  prisma: PrismaClient,
  policy: WebhookRetentionPolicy,
  reporter: RetentionReporter,
): RetentionJob {
  let stopping = false;
  let queued = 0;
  let running: Promise<PurgeCounts> = Promise.resolve({ deliveries: 0, attempts: 0, events: 0 });
  const runNow = () => {
    queued++;
    return (running = running
      .then(async () => {
        const now = new Date();
        const counts = await purgeWebhookLog(prisma, policy, now, reporter, () => stopping);
        if (counts.deliveries + counts.attempts + counts.events > 0) reporter.onSummary?.(counts, retentionCutoff(now, policy));
        return counts;
      })
      .catch((err: unknown) => {
        reporter.onError(err);
        return { deliveries: 0, attempts: 0, events: 0 };
      })
      .finally(() => queued--));
  };
  void runNow();
  // A run still going at the next tick (a large backlog) is not followed by a pile of queued runs.
  const timer = setInterval(() => void (queued === 0 && runNow()), policy.intervalMs);
  timer.unref();
  return {
    runNow,
    stop: async () => {
      stopping = true;
      clearInterval(timer);
      await running;
    },
  };
}
