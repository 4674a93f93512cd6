/**
 * Issue 31 item 5's figure, measured by hand (not part of the test suite: it takes minutes): client/examples/import-csv.ts
 * importing N rows (default 10,000) with batch upsert into a fresh server with the contract's default rate limit (60
 * requests per 60 seconds per key), the wall time of the whole command, then the server's time for one batch of 100
 * upserts (three more batches sent with the client, timed one by one).
 *
 *   node --import tsx test/client-examples/measure-import.ts [rows]
 *
 * Rebuild the client first (`npm run build -w client`): the example imports the package's build.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { clientEnv, runExample, startExampleServer } from "./helpers";

async function main(): Promise<void> {
  const rows = Number(process.argv[2] ?? 10_000);
  const s = await startExampleServer(60);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "stageline-measure-"));
  try {
    const file = path.join(dir, "leads.csv");
    const lines = ["name,stage,status,email,deal_value:number,source"];
    for (let n = 1; n <= rows; n++) lines.push(`Lead ${n},${["Lead", "Qualified", "Proposal"][n % 3]},Open,lead${n}@measure.example,${n},csv-measure`);
    fs.writeFileSync(file, `${lines.join("\n")}\n`);
    const started = Date.now();
    const run = runExample("import-csv.ts", [file, "--pipeline", "Sales"], clientEnv(s));
    const exit = await run.exit;
    const wallMs = Date.now() - started;
    process.stdout.write(`import-csv.ts, ${rows} rows, limit 60/60 s: exit ${exit.code}, wall ${(wallMs / 1000).toFixed(1)} s\n${run.stderr().trim().split("\n").pop()}\n`);
    let count = 0;
    for await (const item of s.client.items.iterate({ limit: 500 })) if (item.source === "csv-measure") count++;
    process.stdout.write(`items with source csv-measure: ${count}\n`);
    // the rate limit is spent by now: wait for a fresh window so the timings are the server's alone
    await new Promise((resolve) => setTimeout(resolve, 61_000));
    const stage = (await s.client.pipelines.stages((await s.client.pipelines.list())[0]!.id))[0]!;
    const pipelineId = (await s.client.pipelines.list())[0]!.id;
    for (let b = 0; b < 3; b++) {
      const ops = Array.from({ length: 100 }, (_, i) => ({ op: "upsert" as const, name: `Timed ${b}-${i}`, pipeline_id: pipelineId, stage_id: stage.id, metadata: { email: `timed${b}-${i}@measure.example` } }));
      const t0 = Date.now();
      await s.client.items.batch(ops);
      process.stdout.write(`one batch of 100 upserts (new items): ${Date.now() - t0} ms\n`);
    }
  } finally {
    await s.server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
