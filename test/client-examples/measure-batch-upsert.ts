/**
 * Issue 31 item 5's per-batch figure, measured by hand (not part of the test suite): the server's time for one batch
 * of 100 upserts of new rows (each creates) and of existing rows (each updates), with 0 and then N (default 10,000)
 * items in the pipeline, through `@stageline/client` against a server in this process (PGlite, or PostgreSQL with
 * TEST_DATABASE_URL) with a raised rate limit (the timings are the server's alone).
 *
 *   node --import tsx test/client-examples/measure-batch-upsert.ts [items] [rounds]
 */
import os from "node:os";
import { startExampleServer } from "./helpers";

async function main(): Promise<void> {
  const items = Number(process.argv[2] ?? 10_000);
  const rounds = Number(process.argv[3] ?? 3);
  const s = await startExampleServer();
  try {
    const pipelineId = (await s.client.pipelines.list())[0]!.id;
    const stageId = (await s.client.pipelines.stages(pipelineId))[0]!.id;
    const op = (tag: string, n: number) => ({ op: "upsert" as const, name: `Lead ${tag} ${n}`, pipeline_id: pipelineId, stage_id: stageId, metadata: { email: `${tag.replace(/\W/g, "")}${n}@measure.example`, deal_value: n } });
    const time = async (label: string, ops: ReturnType<typeof op>[]) => {
      const t0 = performance.now();
      const results = await s.client.items.batch(ops);
      const ms = performance.now() - t0;
      const bad = results.filter((r) => r.status >= 400).length;
      process.stdout.write(`${label}: ${ms.toFixed(0)} ms (${bad} refused; load ${os.loadavg()[0]!.toFixed(2)})\n`);
      return ms;
    };
    const report = async (existing: string) => {
      for (let r = 0; r < rounds; r++) await time(`${existing}: batch of 100 upserts, new rows (creates)`, Array.from({ length: 100 }, (_, i) => op(`new${existing}r${r}`, i)));
      for (let r = 0; r < rounds; r++) await time(`${existing}: batch of 100 upserts, existing rows (updates)`, Array.from({ length: 100 }, (_, i) => ({ ...op(`new${existing}r${r}`, i), name: `Changed ${r} ${i}` })));
    };
    await report("0 items");
    const t0 = performance.now();
    for (let b = 0; b < items / 100; b++) await s.client.items.batch(Array.from({ length: 100 }, (_, i) => op("fill", b * 100 + i)));
    process.stdout.write(`filled ${items} items in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
    await report(`${items} items`);
  } finally {
    await s.server.close();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
