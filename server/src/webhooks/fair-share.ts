/**
 * Fair share of a lane between companies (docs/architecture.md "Webhook delivery scheduling"): when more queues
 * of a lane are due than there are free slots, no company gets more than `perCompany` of them in flight in this
 * process, and the queues it has beyond that are put back (deferred) instead of standing at the front of the line,
 * so one company's crowd (dead endpoints in the probation lane, many just-fast-enough ones in the healthy lane)
 * cannot make every other company's endpoints wait for it. Work-conserving: while the lane has room for every due
 * queue, nothing is capped.
 * Pure function only.
 */

/** A due queue the claim locked, in due order. */
export interface DueQueue {
  id: string;
  companyId: string;
}

export interface FairShareInput {
  /** Locked candidates, oldest due first (more than `free` when the lane is contended). */
  candidates: readonly DueQueue[];
  /** Free slots of the lane in this process. */
  free: number;
  /** Attempts in flight in this lane in this process, per company id. */
  busy: ReadonlyMap<string, number>;
  /** Most attempts one company may have in flight in the lane when it is contended. */
  perCompany: number;
  /** How long a company's queue over its share is put back per share it is over (ms). */
  deferStepMs: number;
}

export interface FairShareDecision {
  /** Queue ids to claim now, in due order (at most `free`). */
  claim: string[];
  /** Queues put back: due again `delayMs` from now. */
  defer: { id: string; delayMs: number }[];
}

/**
 * Decides which of the locked candidates are claimed and which are put back. Uncontended (no more candidates than
 * free slots): all are claimed. Contended: candidates are taken in due order while their company is under
 * `perCompany` (counting what it already has in flight); a candidate of a company at its share is deferred by
 * `deferStepMs` for every full share it is over (its 1st to `perCompany`th queue over: one step; and so on), so the
 * surplus comes back spread out rather than all at once; candidates left when the slots are full stay as they are.
 */
export function shareSlots(input: FairShareInput): FairShareDecision {
  const { candidates, free, busy, perCompany, deferStepMs } = input;
  if (free <= 0) return { claim: [], defer: [] };
  if (candidates.length <= free) return { claim: candidates.map((c) => c.id), defer: [] };
  const taken = new Map<string, number>();
  const claim: string[] = [];
  const defer: { id: string; delayMs: number }[] = [];
  for (const c of candidates) {
    const has = (busy.get(c.companyId) ?? 0) + (taken.get(c.companyId) ?? 0);
    if (has >= perCompany) {
      const over = has - perCompany + 1;
      defer.push({ id: c.id, delayMs: deferStepMs * Math.ceil(over / Math.max(1, perCompany)) });
      taken.set(c.companyId, (taken.get(c.companyId) ?? 0) + 1);
    } else if (claim.length < free) {
      claim.push(c.id);
      taken.set(c.companyId, (taken.get(c.companyId) ?? 0) + 1);
    }
  }
  return { claim, defer };
}
