/**
 * Locks of an atomic batch (CONTRACT "Batch writes"; services/batch.ts). An atomic batch runs every operation in ONE
 * transaction, so it holds each row and upsert-match lock its operations take until it commits, in operation order.
 * Two atomic batches of one company that touch the same items in opposite orders would then wait for each other.
 * To rule that out, an atomic batch first takes the company's batch lock (a transaction-level advisory lock keyed on
 * the company id), waiting for it: the atomic batches of one company run one after another, and no two of them ever
 * hold row or match locks at the same time. Single requests and non-atomic batches do not take it: each of their
 * transactions locks at most what one single request locks, as before. (A deadlock with one of those, which
 * PostgreSQL detects and breaks by failing one transaction, is retried by the batch: `isDeadlock`.)
 */
import type { TransactionQuery } from "./sql";

/** Inside the atomic batch's transaction: waits for and takes company `companyId`'s batch lock (held until it ends). */
export async function lockCompanyBatches(q: TransactionQuery, companyId: string): Promise<void> {
  await q(`SELECT pg_advisory_xact_lock(hashtextextended('batch' || chr(10) || $1::text, 0))`, [companyId]);
}

/** Is `err` PostgreSQL's `deadlock_detected` (SQLSTATE 40P01) or `serialization_failure` (40001)? */
export function isDeadlock(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === "40P01" || code === "40001";
}
