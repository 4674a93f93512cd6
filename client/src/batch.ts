/**
 * Batch writes from the client (CONTRACT "Batch writes"): the options of `items.batch` / `tasks.batch`, and
 * `batchAll`, which sends any number of operations as batches of at most 100, one after the other (each one request
 * through the client's rate-limit gate), with progress, and an `Idempotency-Key` per batch derived from the caller's
 * key so that running the same work again replays the batches the server already applied instead of applying them
 * twice (keys are kept 24 hours).
 */
import { randomUUID } from "node:crypto";
import { idempotencyKeyOf } from "./api";

/** The most operations one batch request takes (and the default chunk size of `batchAll`). */
export const BATCH_MAX_OPERATIONS = 100;

/** Options of `items.batch` / `tasks.batch`. */
export interface BatchOptions {
  /** All or nothing (default false): when one operation fails none is applied and the call throws BatchFailedError. */
  atomic?: boolean;
  /** The batch's `Idempotency-Key` (1..255 printable ASCII). Default: a random UUID reused by every attempt of the call. */
  idempotencyKey?: string;
}

/** What `batchAll` reports after each batch. */
export interface BatchProgress<R> {
  /** The batch just finished, from 0. */
  chunk: number;
  /** How many batches the operations make. */
  chunks: number;
  /** Operations finished so far (those of skipped batches included), out of `total`. */
  done: number;
  /** How many operations were given. */
  total: number;
  /** The `Idempotency-Key` the batch was sent with. */
  idempotencyKey: string;
  /** The batch's results, their `index` being the position in the whole `operations` array. */
  results: R[];
}

/** Options of `items.batchAll` / `tasks.batchAll`. */
export interface BatchAllOptions<R> {
  /** Operations per batch, 1..100 (default 100). */
  size?: number;
  /** Each batch all or nothing (default false); a failed atomic batch stops `batchAll` with BatchFailedError. */
  atomic?: boolean;
  /**
   * The key batch number `n` (from 0) derives its `Idempotency-Key` from: `<idempotencyKey>:<n>` (at most 255
   * characters in all). Give one that names the work (e.g. the input file's hash) and the same operations in the same
   * order, and a re-run after a crash replays the batches the server already applied (within 24 hours). Default: a
   * random UUID (each run is new work).
   */
  idempotencyKey?: string;
  /** Skip the first `startChunk` batches (already done, e.g. recorded by `onProgress`); default 0. */
  startChunk?: number;
  /** Called (and awaited) after each batch, before the next one is sent; what it throws stops `batchAll`. */
  onProgress?: (progress: BatchProgress<R>) => void | Promise<void>;
  /** Aborting it stops `batchAll` before the next batch: it rejects with the signal's reason (the batch in flight completes). */
  signal?: AbortSignal;
}

/** A batch result, whose `index` `batchAll` rebases onto the whole operations array. */
interface IndexedResult {
  index: number;
}

/**
 * The body and `Idempotency-Key` of one batch request: `{ operations, atomic? }` and the caller's key, else a random
 * UUID (generated once for the call, so every attempt sends it).
 * @throws TypeError (nothing is sent) unless `operations` is an array of 1..100 operations, pointing at `batchAll`.
 */
export function batchRequest<Op>(operations: readonly Op[], options: BatchOptions): { body: { operations: Op[]; atomic?: boolean }; key: string } {
  if (!Array.isArray(operations) || operations.length < 1 || operations.length > BATCH_MAX_OPERATIONS) {
    throw new TypeError(`Stageline: a batch takes 1 to ${BATCH_MAX_OPERATIONS} operations (use batchAll for more)`);
  }
  const body = { operations: operations as Op[], ...(options.atomic === undefined ? {} : { atomic: options.atomic }) };
  return { body, key: idempotencyKeyOf(options) };
}

/** The `Idempotency-Key` of batch number `chunk` of work keyed `base`. */
export function chunkIdempotencyKey(base: string, chunk: number): string {
  return `${base}:${chunk}`;
}

/**
 * Sends `operations` as batches of `size`, in order, one at a time (each waits at the client's rate-limit gate).
 * @param send sends one batch (`items.batch` / `tasks.batch`) with the given options and returns its results.
 * @returns every result of the batches sent, in operation order, `index` being the position in `operations` (the
 * batches skipped by `startChunk` contribute none).
 * @throws TypeError (nothing sent) for `operations` not an array, `size` not an integer 1..100, `startChunk` not an
 * integer >= 0, or a derived key longer than 255 characters; whatever a batch throws (e.g. BatchFailedError for a
 * failed atomic batch, ValidationError 422 `idempotency_key_reused` when the same key now has other operations),
 * `onProgress` throws, or the signal's reason once aborted.
 */
export async function batchAll<Op, R extends IndexedResult>(
  send: (operations: Op[], options: BatchOptions) => Promise<R[]>,
  operations: readonly Op[],
  options: BatchAllOptions<R> = {},
): Promise<R[]> {
  const { size = BATCH_MAX_OPERATIONS, atomic, startChunk = 0, onProgress, signal } = options;
  if (!Array.isArray(operations)) throw new TypeError("Stageline: batchAll needs an array of operations");
  if (!Number.isInteger(size) || size < 1 || size > BATCH_MAX_OPERATIONS) throw new TypeError(`Stageline: batchAll \`size\` must be an integer from 1 to ${BATCH_MAX_OPERATIONS}`);
  if (!Number.isInteger(startChunk) || startChunk < 0) throw new TypeError("Stageline: batchAll `startChunk` must be an integer >= 0");
  const base = options.idempotencyKey ?? randomUUID();
  const chunks = Math.ceil(operations.length / size);
  if (chunks > 0 && chunkIdempotencyKey(base, chunks - 1).length > 255) throw new TypeError("Stageline: batchAll `idempotencyKey` is too long (each batch's key `<key>:<n>` must fit 255 characters)");
  const all: R[] = [];
  for (let chunk = startChunk; chunk < chunks; chunk++) {
    signal?.throwIfAborted();
    const offset = chunk * size;
    const idempotencyKey = chunkIdempotencyKey(base, chunk);
    const sent = await send(operations.slice(offset, offset + size), { atomic, idempotencyKey });
    const results = sent.map((result) => ({ ...result, index: result.index + offset }));
    all.push(...results);
    await onProgress?.({ chunk, chunks, done: Math.min(offset + size, operations.length), total: operations.length, idempotencyKey, results });
  }
  return all;
}
