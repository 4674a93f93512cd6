/**
 * The `batch` phase (issue 31, item 12): `POST /v1/ext/items/batch` with 100 creates against 100 single
 * `POST /v1/ext/items`, as a script sends them: one request at a time (a script under the 60-per-minute limit sends
 * sequentially). N items (2,000; 200 with --quick) each way per round, rounds alternating singles-first and
 * batches-first so drift on a shared machine falls on both; atomic batches (one transaction, one commit) beside them.
 * Figures: wall time per item each way (first request sent to last response received, loopback HTTP included) and
 * the ratios to single creates; the non-atomic one has the target ≤ 0.20 on PostgreSQL (the "one fifth";
 * reported only with --quick).
 */
import type { PhaseHost } from "./isolation";
import { ms, ratio } from "./format";

/** Figure group of the issue-31 phase in the report. */
const ITEM = 12;
/** Operations per batch (the contract's maximum). */
const BATCH = 100;
/** A batch's time per item may be at most this fraction of a single create's. */
const TARGET_RATIO = 0.2;

/** Items created each way per round. */
export function batchPhaseItems(quick: boolean): number {
  return quick ? 200 : 2_000;
}

/** Runs the phase; appends its figures to the host's report. */
export async function runBatchPhase(host: PhaseHost): Promise<void> {
  await host.during("batch: 100-create batches vs single creates", async () => {
    const count = batchPhaseItems(host.o.quick);
    const headers = { "x-api-key": host.api.apiKey, "content-type": "application/json" };
    let failure: string | undefined;
    const post = async (path: string, body: unknown, status: number) => {
      const res = await fetch(`${host.api.baseUrl}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
      const text = await res.text();
      if (res.status !== status) failure ??= `${path}: ${res.status} ${text.slice(0, 200)}`;
      return text;
    };
    const singles = async (tag: string) => {
      const started = performance.now();
      for (let i = 0; i < count; i++) await post("/v1/ext/items", host.itemBody(`${tag}-${i}`), 201);
      return performance.now() - started;
    };
    const batches = async (tag: string, atomic = false) => {
      const started = performance.now();
      for (let b = 0; b < count / BATCH; b++) {
        const operations = Array.from({ length: BATCH }, (_, i) => ({ op: "create", ...(host.itemBody(`${tag}-${b}-${i}`) as object) }));
        const text = await post("/v1/ext/items/batch", { operations, atomic }, 200);
        if (!failure && !text.includes('"status":201')) failure = `batch answered ${text.slice(0, 200)}`;
      }
      return performance.now() - started;
    };
    // Warm-up: both paths' statements prepared.
    await singles("warm-single");
    await batches("warm-batch");
    const rounds = host.o.quick ? 1 : 2;
    const single: number[] = [];
    const batch: number[] = [];
    const atomic: number[] = [];
    for (let r = 0; r < rounds; r++) {
      if (r % 2 === 0) {
        single.push(await singles(`s${r}`));
        batch.push(await batches(`b${r}`));
        atomic.push(await batches(`a${r}`, true));
      } else {
        atomic.push(await batches(`a${r}`, true));
        batch.push(await batches(`b${r}`));
        single.push(await singles(`s${r}`));
      }
      host.assertAlive();
      host.log(
        `    round ${r + 1}: ${count} single creates ${(single[r]! / 1000).toFixed(2)} s, ${count / BATCH} batches of ${BATCH} ${(batch[r]! / 1000).toFixed(2)} s, atomic ${(atomic[r]! / 1000).toFixed(2)} s`,
      );
    }
    if (failure) host.errors.push(`batch phase: ${failure}`);
    const perSingle = single.reduce((a, b) => a + b, 0) / (rounds * count);
    const perBatch = batch.reduce((a, b) => a + b, 0) / (rounds * count);
    const perAtomic = atomic.reduce((a, b) => a + b, 0) / (rounds * count);
    const r = perBatch / perSingle;
    host.figures.push(
      { item: ITEM, metric: `Create, one request per item (${count} in a row): time per item`, value: perSingle, display: ms(perSingle) },
      { item: ITEM, metric: `Create, batches of ${BATCH} (${count / BATCH} in a row): time per item`, value: perBatch, display: ms(perBatch) },
      { item: ITEM, metric: `Create, atomic batches of ${BATCH}: time per item`, value: perAtomic, display: ms(perAtomic) },
      { item: ITEM, metric: "Atomic batch ÷ single time per item", value: perAtomic / perSingle, display: ratio(perAtomic / perSingle) },
      {
        item: ITEM,
        metric: "Batch ÷ single time per item",
        value: r,
        display: ratio(r),
        ...(host.o.quick || host.kind !== "postgres" ? {} : { target: { op: "<=" as const, limit: TARGET_RATIO, text: `≤ ${TARGET_RATIO.toFixed(2)}x` } }),
      },
    );
  });
}
