/**
 * The webhook dispatcher (CONTRACT.md "Events and deliveries"): sends the deliveries the outbox queued, at least
 * once, in event order per subscription, signed (Standard Webhooks), retried with backoff for up to 3 days, every
 * attempt logged.
 *
 * How it runs: a claim cycle first adopts the outbox's wake-ups (queues with new deliveries become due), then
 * leases due queues (db/webhook-dispatch.ts, safe across processes, at a cost that does not grow with the
 * backlog): the head of each due subscription's queue, with up to `batchSize - 1` followers in the healthy lane.
 * Each subscription's batch is sent in order, one attempt at a time, outside any transaction. Each result is
 * written with its state change and the endpoint's health in one statement.
 *
 * Isolation (webhooks/endpoint-health.ts): endpoints whose last attempt succeeded quickly are served from the
 * healthy lane's budget (`concurrency`); new, failing and slow endpoints from the probation lane's
 * (`probationConcurrency`). Dead endpoints, however many and in whichever company, only ever wait for each other;
 * and when a lane is contended, each company gets at most its share of it (`healthyPerCompany`,
 * `probationPerCompany`; webhooks/fair-share.ts), so one company's crowd cannot hold up other companies' endpoints.
 *
 * A cycle starts on `wake()` (after every outbox commit: `ctx.eventsCommitted`), when a batch ends (the next
 * delivery of that subscription may now be due), when a scheduled retry falls due, on a PostgreSQL `NOTIFY` from
 * another process, and on a fallback poll (retries scheduled elsewhere, expired leases of a crashed process).
 * Concurrent triggers coalesce into one more cycle.
 *
 * Options (constructor, else environment, else default):
 * | option               | env                           | default   |                                          |
 * |----------------------|-------------------------------|-----------|------------------------------------------|
 * | concurrency          | WEBHOOK_CONCURRENCY           | 128       | healthy-lane subscriptions served at once |
 * | probationConcurrency | WEBHOOK_PROBATION_CONCURRENCY | 128       | probation-lane subscriptions at once     |
 * | probationPerCompany  | WEBHOOK_PROBATION_PER_COMPANY | 16        | one company's share of a contended probation lane |
 * | healthyPerCompany    | WEBHOOK_HEALTHY_PER_COMPANY   | 32        | one company's share of a contended healthy lane |
 * | slowMs               | WEBHOOK_SLOW_MS               | 2000      | a success slower than this is probation  |
 * | batchSize            | WEBHOOK_BATCH_SIZE            | 8         | in-order deliveries of one subscription per claim |
 * | timeoutMs      | WEBHOOK_TIMEOUT_MS      | 10000     | per attempt (CONTRACT: 10 s)                       |
 * | leaseMs        | WEBHOOK_LEASE_MS        | 30000     | claim lease; a crashed process's claims return then |
 * | pollIntervalMs | WEBHOOK_POLL_MS         | 1000      | fallback poll                                      |
 * | retry.baseMs   | WEBHOOK_RETRY_BASE_MS   | 1000      | first backoff bound, doubling per attempt          |
 * | retry.maxStepMs| WEBHOOK_RETRY_MAX_MS    | 3600000   | cap of one backoff step and of Retry-After         |
 * | retry.windowMs | WEBHOOK_RETRY_WINDOW_MS | 259200000 | retry for this long after creation (3 days)        |
 */
import os from "node:os";
import crypto from "node:crypto";
import type { Logger } from "pino";
import type { AppContext } from "../context";
import {
  adoptWakeups,
  claimDueDeliveries,
  deleteGoneSubscription,
  disableFailingSubscription,
  recordAttempt,
  releaseLeases,
  type ClaimedDelivery,
  type QueueUpdate,
} from "../db/webhook-dispatch";
import { DELETION_EVENT_TYPES, eraseDeletedItemEventIfFinished, eraseFinishedDeletedItemEvents } from "../db/event-erasure";
import { DEFAULT_ENDPOINT_HEALTH_POLICY, healthAfterAttempt } from "./endpoint-health";
import { shareSlots } from "./fair-share";
import { deliveryHeaders, sendAttempt, type AttemptResult } from "./deliver";
import { listenForOutbox, notifyOutbox, type OutboxListener } from "./notify";
import { classifyResponse, DEFAULT_RETRY_POLICY, parseRetryAfterMs, scheduleRetry, type AttemptOutcome, type RetryPolicy } from "./retry-policy";
import { signDelivery } from "./signing";
import { WEBHOOK_EVENT_HEADER } from "@stageline/shared";

export interface DispatcherOptions {
  /** Healthy-lane subscriptions served at once (each sends its batch one delivery at a time). */
  concurrency: number;
  /** Probation-lane subscriptions (new, failing or slow endpoints) served at once. */
  probationConcurrency: number;
  /** A successful attempt slower than this (ms) puts its endpoint in the probation lane. */
  slowMs: number;
  /** Most probation attempts one company may have in flight while the lane is contended. */
  probationPerCompany: number;
  /** Most healthy-lane batches one company may have in flight while the lane is contended. */
  healthyPerCompany: number;
  /** Deliveries of one subscription claimed together and sent in order. */
  batchSize: number;
  timeoutMs: number;
  leaseMs: number;
  pollIntervalMs: number;
  retry: RetryPolicy;
  /** Jitter source, [0, 1). */
  random: () => number;
  /** This dispatcher's lease owner id (default: host, pid and a random suffix). */
  ownerId: string;
}

const DEFAULTS = {
  concurrency: 128,
  probationConcurrency: 128,
  probationPerCompany: 16,
  healthyPerCompany: 32,
  slowMs: DEFAULT_ENDPOINT_HEALTH_POLICY.slowMs,
  batchSize: 8,
  timeoutMs: 10_000,
  leaseMs: 30_000,
  pollIntervalMs: 1_000,
};

/**
 * Queues one claim takes at most per lane: each claimed queue costs the claim's second statement a few index
 * probes and two row updates (about 0.2 ms on PostgreSQL), so this keeps every claim short (on PGlite every other
 * statement waits for it); a claim that took this many runs another at once.
 */
const CLAIM_QUEUES_PER_LANE = 32;

/** Due queues a claim looks at per free slot of a lane, so that fair share can see past one company's crowd. */
const SHARE_WINDOW_FACTOR = 4;

/** Wake-up rows adopted per claim cycle (a cycle that adopts this many runs another at once). */
const ADOPT_BATCH = 1_000;

/** A batch's next delivery is only sent while its lease outlasts a whole attempt by this much. */
const LEASE_MARGIN_MS = 2_000;
/** A claimed delivery due this much later by the process clock than by the database clock waits for it (ms). */
const MAX_CLOCK_LEAD_MS = 50;

/**
 * Reads the dispatcher's options from the environment (see the table above); unset variables are left out.
 * @throws when a variable is set but not a positive integer.
 */
export function dispatcherOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): Partial<DispatcherOptions> {
  const read = (name: string): number | undefined => {
    const raw = env[name];
    if (raw === undefined || raw === "") return undefined;
    const n = Number(raw);
    if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer (got "${raw}")`);
    return n;
  };
  const out: Partial<DispatcherOptions> = {};
  const set = <K extends "concurrency" | "probationConcurrency" | "probationPerCompany" | "healthyPerCompany" | "slowMs" | "batchSize" | "timeoutMs" | "leaseMs" | "pollIntervalMs">(key: K, name: string) => {
    const v = read(name);
    if (v !== undefined) out[key] = v;
  };
  set("concurrency", "WEBHOOK_CONCURRENCY");
  set("probationConcurrency", "WEBHOOK_PROBATION_CONCURRENCY");
  set("slowMs", "WEBHOOK_SLOW_MS");
  set("probationPerCompany", "WEBHOOK_PROBATION_PER_COMPANY");
  set("healthyPerCompany", "WEBHOOK_HEALTHY_PER_COMPANY");
  set("batchSize", "WEBHOOK_BATCH_SIZE");
  set("timeoutMs", "WEBHOOK_TIMEOUT_MS");
  set("leaseMs", "WEBHOOK_LEASE_MS");
  set("pollIntervalMs", "WEBHOOK_POLL_MS");
  const retry = {
    baseMs: read("WEBHOOK_RETRY_BASE_MS") ?? DEFAULT_RETRY_POLICY.baseMs,
    maxStepMs: read("WEBHOOK_RETRY_MAX_MS") ?? DEFAULT_RETRY_POLICY.maxStepMs,
    windowMs: read("WEBHOOK_RETRY_WINDOW_MS") ?? DEFAULT_RETRY_POLICY.windowMs,
  };
  if (Object.entries(retry).some(([k, v]) => v !== DEFAULT_RETRY_POLICY[k as keyof RetryPolicy])) out.retry = retry;
  return out;
}

type RunState = "new" | "running" | "stopping" | "stopped";

/** Sends webhook deliveries. One per server process; `start()` after listening, `await stop()` on shutdown. */
export class WebhookDispatcher {
  readonly options: DispatcherOptions;
  private readonly logger: Logger;
  private state: RunState = "new";
  /** The claim cycle in progress, if any. */
  private cycle: Promise<void> | null = null;
  /** A trigger arrived during the cycle in progress: run one more. */
  private rerun = false;
  /** Batches being sent, by their first delivery's id, with their lane. */
  private readonly inFlight = new Map<string, { run: Promise<void>; healthy: boolean; companyId: string }>();
  private pollTimer: NodeJS.Timeout | null = null;
  /** Times (ms) of retries this dispatcher scheduled, and the timer of the earliest. */
  private retryTimes: number[] = [];
  private retryTimer: NodeJS.Timeout | null = null;
  private listener: OutboxListener | null = null;
  private notifying: Promise<void> | null = null;
  private notifyAgain = false;
  /** Aborts attempts still running when the shutdown grace period ends. */
  private readonly shutdown = new AbortController();
  private stopping: Promise<void> | null = null;

  constructor(
    private readonly ctx: AppContext,
    options: Partial<Omit<DispatcherOptions, "retry">> & { retry?: Partial<RetryPolicy> } = {},
  ) {
    const fromEnv = dispatcherOptionsFromEnv();
    this.options = {
      ...DEFAULTS,
      random: Math.random,
      ownerId: `${os.hostname()}:${process.pid}:${crypto.randomBytes(4).toString("hex")}`,
      ...fromEnv,
      ...options,
      retry: { ...DEFAULT_RETRY_POLICY, ...fromEnv.retry, ...options.retry },
    };
    if (this.options.leaseMs <= this.options.timeoutMs + LEASE_MARGIN_MS) {
      // A lease shorter than an attempt could let a second dispatcher send the same delivery while the first still is.
      throw new Error(`webhook lease (${this.options.leaseMs} ms) must exceed the attempt timeout (${this.options.timeoutMs} ms) by more than ${LEASE_MARGIN_MS} ms`);
    }
    this.logger = ctx.logger.child({ component: "webhook-dispatcher", owner: this.options.ownerId });
  }

  /** Starts dispatching: an immediate claim cycle, the fallback poll and, on PostgreSQL, the LISTEN connection. */
  start(): void {
    if (this.state !== "new") return;
    this.state = "running";
    this.pollTimer = setInterval(() => this.kick(), this.options.pollIntervalMs);
    this.pollTimer.unref();
    const pool = this.ctx.db.pgPool;
    if (pool) {
      this.listener = listenForOutbox(pool, {
        schema: this.ctx.db.schema,
        self: this.options.ownerId,
        onWake: () => this.kick(),
        logger: this.logger,
        reconnectMs: this.options.pollIntervalMs,
      });
    }
    this.kick();
  }

  /**
   * Outbox events were committed: claim them now, and on PostgreSQL tell the other processes too (NOTIFY).
   * Cheap and never throws; calls while a cycle runs coalesce.
   */
  wake(): void {
    if (this.state !== "running") return;
    this.kick();
    this.notifyOthers();
  }

  /**
   * Graceful shutdown: stops claiming, waits for attempts in flight (each bounded by the attempt timeout; any still
   * running a grace period later are aborted and retried later), then releases the leases of anything claimed but
   * not attempted so another process can take it at once. Safe to call twice; after it, no database access.
   */
  stop(): Promise<void> {
    if (this.state === "new") this.state = "stopped";
    if (this.state === "stopped") return Promise.resolve();
    return (this.stopping ??= this.shutDown());
  }

  private async shutDown(): Promise<void> {
    this.state = "stopping";
    if (this.pollTimer) clearInterval(this.pollTimer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.pollTimer = this.retryTimer = null;
    await this.listener?.close();
    await this.cycle;
    const grace = setTimeout(() => this.shutdown.abort(), this.options.timeoutMs + 2_000);
    await Promise.allSettled([...this.inFlight.values()].map((b) => b.run));
    clearTimeout(grace);
    await this.notifying;
    try {
      const released = await releaseLeases(this.ctx.prisma, this.options.ownerId);
      if (released) this.logger.info({ released }, "released webhook delivery leases");
    } catch (err) {
      this.logger.warn({ err }, "could not release webhook delivery leases; they expire on their own");
    }
    this.state = "stopped";
  }

  /** Starts a claim cycle, or asks the running one for another round. */
  private kick(): void {
    if (this.state !== "running") return;
    if (this.cycle) {
      this.rerun = true;
      return;
    }
    this.rerun = false;
    this.cycle = this.claimAndSend().finally(() => {
      this.cycle = null;
      if (this.rerun) this.kick();
    });
  }

  /** Batches in flight in this process in the healthy (`true`) or probation lane, per company. */
  private busyByCompany(healthy: boolean): Map<string, number> {
    const busy = new Map<string, number>();
    for (const batch of this.inFlight.values()) if (batch.healthy === healthy) busy.set(batch.companyId, (busy.get(batch.companyId) ?? 0) + 1);
    return busy;
  }

  /** Free slots of each lane. */
  private freeSlots(): { healthy: number; probation: number } {
    let healthy = 0;
    for (const batch of this.inFlight.values()) if (batch.healthy) healthy++;
    return {
      healthy: Math.max(0, this.options.concurrency - healthy),
      probation: Math.max(0, this.options.probationConcurrency - (this.inFlight.size - healthy)),
    };
  }

  private async claimAndSend(): Promise<void> {
    try {
      const adopted = await adoptWakeups(this.ctx.prisma, ADOPT_BATCH);
      if (adopted >= ADOPT_BATCH) this.rerun = true;
    } catch (err) {
      this.logger.warn({ err }, "adopting webhook wake-ups failed; retrying at the next poll");
    }
    const slots = this.freeSlots();
    if (slots.healthy + slots.probation <= 0) return; // a batch that ends kicks again
    const free = { healthy: Math.min(slots.healthy, CLAIM_QUEUES_PER_LANE), probation: Math.min(slots.probation, CLAIM_QUEUES_PER_LANE) };
    const claimStarted = Date.now();
    let claimed: ClaimedDelivery[];
    try {
      claimed = await claimDueDeliveries(this.ctx.prisma, {
        ownerId: this.options.ownerId,
        lanes: free,
        leaseMs: this.options.leaseMs,
        batchSize: this.options.batchSize,
        healthyWindow: free.healthy * SHARE_WINDOW_FACTOR,
        probationWindow: free.probation * SHARE_WINDOW_FACTOR,
        shareHealthy: (candidates) =>
          shareSlots({ candidates, free: free.healthy, busy: this.busyByCompany(true), perCompany: this.options.healthyPerCompany, deferStepMs: this.options.slowMs }),
        shareProbation: (candidates) =>
          shareSlots({ candidates, free: free.probation, busy: this.busyByCompany(false), perCompany: this.options.probationPerCompany, deferStepMs: this.options.timeoutMs }),
      });
      this.ctx.metrics.delivery.claim(Date.now() - claimStarted);
    } catch (err) {
      this.logger.warn({ err }, "claiming webhook deliveries failed; retrying at the next poll");
      return;
    }
    if (this.state !== "running") {
      await releaseLeases(this.ctx.prisma, this.options.ownerId, claimed.map((c) => c.id)).catch(() => undefined);
      return;
    }
    // The lease ends at the database's claim time + leaseMs, which is no earlier than this.
    const leaseEnd = claimStarted + this.options.leaseMs;
    const batches = new Map<string, ClaimedDelivery[]>();
    for (const d of claimed) batches.set(d.subscriptionId, [...(batches.get(d.subscriptionId) ?? []), d]);
    const claimedPerLane = { healthy: 0, probation: 0 };
    for (const batch of batches.values()) claimedPerLane[batch[0].healthy ? "healthy" : "probation"]++;
    if ((free.healthy > 0 && claimedPerLane.healthy >= free.healthy) || (free.probation > 0 && claimedPerLane.probation >= free.probation)) {
      this.rerun = true; // a lane took all it could: more may be due
    }
    for (const batch of batches.values()) {
      const key = batch[0].id;
      const run = this.sendInOrder(batch, leaseEnd).finally(() => {
        this.inFlight.delete(key);
        this.kick();
      });
      this.inFlight.set(key, { run, healthy: batch[0].healthy, companyId: batch[0].companyId });
    }
  }

  /**
   * Sends one subscription's claimed deliveries one after another, in `seq` order. Stops, releasing the rest, when
   * one must be retried later (the rest wait behind it), the subscription is gone, the dispatcher is stopping, or
   * the lease could run out during the next attempt. The last attempt recorded (or the release) makes the queue
   * due again, so the next claim sends what follows.
   */
  private async sendInOrder(batch: ClaimedDelivery[], leaseEnd: number): Promise<void> {
    const started = Date.now();
    for (let i = 0; i < batch.length; i++) {
      const last = Date.now() + this.options.timeoutMs + LEASE_MARGIN_MS > leaseEnd;
      // A healthy-lane batch holds its slot for at most about `slowMs`: an endpoint that answers just under it
      // cannot keep a slot for a whole batch of slow answers.
      const overdue = Date.now() - started > this.options.slowMs;
      if (i > 0 && (this.state !== "running" || last || overdue)) return this.release(batch.slice(i));
      let outcome: AttemptOutcome;
      try {
        outcome = await this.attempt(batch[i], i === batch.length - 1);
      } catch (err) {
        this.logger.error({ err, deliveryId: batch[i].id }, "webhook attempt could not be recorded; its lease will expire and it will be retried");
        return this.release(batch.slice(i + 1));
      }
      if (outcome === "retry" || outcome === "gone") return this.release(batch.slice(i + 1));
    }
  }

  private async release(rest: ClaimedDelivery[]): Promise<void> {
    if (!rest.length) return;
    await releaseLeases(this.ctx.prisma, this.options.ownerId, rest.map((d) => d.id)).catch((err) =>
      this.logger.warn({ err }, "could not release webhook delivery leases; they expire on their own"),
    );
  }

  /**
   * Sends one claimed delivery and records the outcome with the endpoint's health.
   * @param endsBatch no more of the claimed batch follows (the queue is then due again, unless retrying).
   */
  private async attempt(d: ClaimedDelivery, endsBatch: boolean): Promise<AttemptOutcome> {
    // The claim compared `next_attempt_at` with the database's clock, which can lead this process's clock by a
    // millisecond of rounding (PGlite). Never send before the due time by the clock that records the attempt.
    const early = d.nextAttemptAt.getTime() - Date.now();
    if (early > 0 && early <= MAX_CLOCK_LEAD_MS) await new Promise((resolve) => setTimeout(resolve, early));
    const attemptedAt = new Date();
    const body = JSON.stringify(d.payload);
    let result: AttemptResult;
    let requestHeaders: Record<string, string> | null = null;
    try {
      const signature = signDelivery(d.eventId, attemptedAt, body, d.previousSecret ? [d.secret, d.previousSecret] : [d.secret]);
      const request = { url: d.targetUrl, body, headers: { ...signature, [WEBHOOK_EVENT_HEADER]: d.eventType } };
      requestHeaders = deliveryHeaders(request);
      result = await sendAttempt(request, {
        timeoutMs: this.options.timeoutMs,
        production: this.ctx.config.mode === "production",
        signal: this.shutdown.signal,
      });
    } catch (err) {
      result = { status: null, durationMs: 0, responseExcerpt: null, retryAfter: null, error: `cannot sign the delivery: ${(err as Error).message}`, permanent: true };
    }
    const finishedAt = new Date();
    const attemptNo = d.attemptCount + 1;
    const outcome = result.permanent ? "failed" : classifyResponse(result.status);
    const log = { deliveryId: d.id, eventId: d.eventId, subscriptionId: d.subscriptionId, event: d.eventType, attempt: attemptNo, status: result.status, durationMs: result.durationMs, outcome };
    const health = healthAfterAttempt(outcome, result.durationMs, { slowMs: this.options.slowMs });
    this.ctx.metrics.delivery.attempt(outcome);
    // The delivery row is written in the event's own statement: its created_at is the event's.
    if (outcome === "succeeded") this.ctx.metrics.delivery.delivered(finishedAt.getTime() - d.createdAt.getTime());
    const record = async (state: "pending" | "succeeded" | "failed", nextAttemptAt: Date | null) => {
      await recordAttemptOnly(state, nextAttemptAt);
      // CONTRACT "Item deletion and erasure", "Notes": an item.deleted / note.deleted body is kept only while its
      // deliveries are pending.
      if (state !== "pending" && (DELETION_EVENT_TYPES as readonly string[]).includes(d.eventType)) await eraseDeletedItemEventIfFinished(this.ctx.prisma, d.id);
    };
    const recordAttemptOnly = (state: "pending" | "succeeded" | "failed", nextAttemptAt: Date | null) =>
      recordAttempt(this.ctx.prisma, {
        deliveryId: d.id,
        subscriptionId: d.subscriptionId,
        ownerId: this.options.ownerId,
        // A retry keeps this delivery at the head until then; otherwise look again when the batch is over.
        queue: { ...health, nextLook: state === "pending" && nextAttemptAt ? nextAttemptAt : endsBatch ? "now" : "keep" } satisfies QueueUpdate,
        state,
        completedAt: state === "pending" ? null : finishedAt,
        attempt: {
          attemptedAt,
          responseStatus: result.status,
          durationMs: result.durationMs,
          responseExcerpt: result.responseExcerpt,
          requestHeaders,
          error: result.error ?? (outcome === "succeeded" ? null : `HTTP ${result.status}`),
          nextAttemptAt,
        },
      });

    switch (outcome) {
      case "succeeded":
        await record("succeeded", null);
        this.logger.debug(log, "webhook delivered");
        return outcome;
      case "gone":
        await deleteGoneSubscription(this.ctx.prisma, d.subscriptionId);
        await eraseFinishedDeletedItemEvents(this.ctx.prisma, d.companyId); // its item.deleted deliveries went with it
        this.logger.warn(log, "webhook target answered 410 Gone: subscription deleted");
        return outcome;
      case "failed":
        await record("failed", null);
        this.logger.warn({ ...log, error: result.error }, "webhook delivery failed; not retried");
        await this.disableIfFailing(d, finishedAt, null, result);
        return outcome;
      case "retry": {
        const decision = scheduleRetry(
          { attempt: attemptNo, createdAt: d.createdAt, attemptedAt, now: finishedAt, retryAfterMs: parseRetryAfterMs(result.retryAfter, finishedAt.getTime()) },
          this.options.random,
          this.options.retry,
        );
        await record(decision.state, decision.nextAttemptAt);
        if (decision.state === "pending") {
          this.logger.warn({ ...log, error: result.error, nextAttemptAt: decision.nextAttemptAt }, "webhook attempt failed; will retry");
          this.retryAt(decision.nextAttemptAt.getTime());
        } else {
          this.logger.warn({ ...log, error: result.error }, "webhook delivery failed: retry window over");
          await this.disableIfFailing(d, finishedAt, d.createdAt, result);
        }
        return outcome;
      }
    }
  }

  /**
   * After a delivery ended as failed: disables its subscription when its deliveries have kept failing for the
   * retry window (3 days). A delivery whose whole window passed without any success of its subscription
   * (`noSuccessSince` = its creation) proves it; after a non-retryable failure, the subscription's attempts must
   * have failed since a window ago.
   */
  private async disableIfFailing(d: ClaimedDelivery, now: Date, exhaustedSince: Date | null, result: AttemptResult): Promise<void> {
    const windowStart = new Date(now.getTime() - this.options.retry.windowMs);
    const reason = `every delivery attempt failed for ${formatSpan(this.options.retry.windowMs)}; last: ${result.error ?? `HTTP ${result.status}`}`.slice(0, 1000);
    const disabled = await disableFailingSubscription(this.ctx.prisma, {
      subscriptionId: d.subscriptionId,
      noSuccessSince: exhaustedSince ?? windowStart,
      lastAttemptFailedAt: exhaustedSince ? null : windowStart,
      reason,
      now,
    });
    if (disabled) {
      this.logger.warn({ subscriptionId: d.subscriptionId, reason }, "webhook subscription disabled");
      await eraseFinishedDeletedItemEvents(this.ctx.prisma, d.companyId); // its pending item.deleted deliveries ended as failed
    }
  }

  /** Arms a wake-up for a retry this dispatcher scheduled, so it goes out on time without waiting for the poll. */
  private retryAt(at: number): void {
    if (this.state !== "running" || this.retryTimes.length >= 10_000) return; // the poll covers the rest
    this.retryTimes.push(at);
    this.armRetryTimer();
  }

  private armRetryTimer(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    if (this.state !== "running" || this.retryTimes.length === 0) return;
    const next = Math.min(...this.retryTimes);
    this.retryTimer = setTimeout(() => {
      const now = Date.now();
      this.retryTimes = this.retryTimes.filter((t) => t > now);
      this.kick();
      this.armRetryTimer();
    }, Math.max(0, next - Date.now()) + 5);
    this.retryTimer.unref();
  }

  /** NOTIFY the other processes on this database, coalescing bursts into at most one extra round trip. */
  private notifyOthers(): void {
    const pool = this.ctx.db.pgPool;
    if (!pool) return;
    if (this.notifying) {
      this.notifyAgain = true;
      return;
    }
    this.notifyAgain = false;
    this.notifying = notifyOutbox(pool, this.ctx.db.schema, this.options.ownerId)
      .catch((err) => this.logger.warn({ err }, "NOTIFY of webhook wake-up failed; other processes poll"))
      .finally(() => {
        this.notifying = null;
        if (this.notifyAgain && this.state === "running") this.notifyOthers();
      });
  }
}

/** A duration for people: "3 days", "12 hours", "1.5 s". */
function formatSpan(ms: number): string {
  const day = 86_400_000;
  const hour = 3_600_000;
  if (ms >= day && ms % day === 0) return `${ms / day} day${ms === day ? "" : "s"}`;
  if (ms >= hour && ms % hour === 0) return `${ms / hour} hour${ms === hour ? "" : "s"}`;
  return `${ms / 1000} s`;
}
