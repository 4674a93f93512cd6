/**
 * The request log's buffer policy (issue 40; CONTRACT "Request ids and the request log": "one company's volume never
 * delays another's entries", and writing it never blocks a request): entries wait in memory in one FIFO queue per
 * company; a batch takes them round-robin, one company at a time, so a company sending thousands of requests a second
 * fills its own queue, not the batches. The buffer is bounded twice: a company's queue holds at most `perCompany`
 * entries and all queues `total`; an entry over either bound is dropped at once (counted by the caller), never queued
 * and never waited for.
 */

/** The bounds of a `FairBuffer`. */
export interface FairBufferLimits {
  /** Most entries one company may have waiting. */
  perCompany: number;
  /** Most entries waiting in all. */
  total: number;
}

/** Why an entry was not kept. */
export type DropReason = "company_full" | "buffer_full";

/** A bounded, per-company round-robin buffer of `T`. */
export class FairBuffer<T> {
  private readonly queues = new Map<string, T[]>();
  private waiting = 0;

  constructor(private readonly limits: FairBufferLimits) {}

  /** Entries waiting. */
  get size(): number {
    return this.waiting;
  }

  /**
   * Queues `entry` of `company`.
   * @returns null when queued, else why it was dropped.
   */
  add(company: string, entry: T): DropReason | null {
    if (this.waiting >= this.limits.total) return "buffer_full";
    let queue = this.queues.get(company);
    if (queue && queue.length >= this.limits.perCompany) return "company_full";
    if (!queue) {
      queue = [];
      this.queues.set(company, queue);
    }
    queue.push(entry);
    this.waiting++;
    return null;
  }

  /**
   * Takes up to `max` entries round-robin: one entry of the company at the front, which then goes to the back (or
   * leaves when its queue is empty), and so on. With N companies waiting each gets about max / N places in the batch,
   * whatever their queues' lengths, and the rotation carries over to the next batch, so no company waits behind
   * another's volume for more than one round.
   */
  take(max: number): T[] {
    const out: T[] = [];
    // A Map iterates in insertion order and visits keys re-inserted during the loop: that is the rotation.
    for (const [company, queue] of this.queues) {
      if (out.length >= max) break;
      out.push(queue.shift()!);
      this.waiting--;
      this.queues.delete(company);
      if (queue.length > 0) this.queues.set(company, queue);
    }
    return out;
  }
}
