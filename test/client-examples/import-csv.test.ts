/**
 * client/examples/import-csv.ts against a real server: a batch-upsert import (batches of 10 here) killed midway
 * (SIGKILL, a crash) and then interrupted (SIGINT, Ctrl-C) and run a third time to the end leaves exactly one item per
 * CSV row, with the row's stage, status and typed custom fields; the progress file makes each run continue after the
 * last finished batch, and running the import again updates the same items; a row the server or the script refuses is
 * reported and skipped; `--create` imports rows the pipeline's duplicate detection cannot match.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Item } from "@stageline/client";
import { clientEnv, runExample, startExampleServer, type ExampleServer } from "./helpers";

const ROWS = 150;
const STAGES = ["Lead", "Qualified", "Proposal"];

let s: ExampleServer;
let dir: string;

beforeAll(async () => {
  s = await startExampleServer();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "stageline-import-"));
});

afterAll(async () => {
  await s?.server.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** The company's items whose source is `source`, oldest first. */
async function imported(source: string): Promise<Item[]> {
  const items: Item[] = [];
  for await (const item of s.client.items.iterate({})) if (item.source === source) items.push(item);
  return items.reverse();
}

/** The `row <n>:` lines an import printed with --verbose. */
const rowLines = (stdout: string) => stdout.split("\n").filter((l) => /^row \d+:/.test(l));

it("resumes after a crash and after Ctrl-C from its progress file, without creating any row twice", async () => {
  const file = path.join(dir, "leads.csv");
  const progressFile = `${file}.import-progress.json`;
  const lines = ["name,stage,status,email,deal_value:number,source"];
  for (let n = 1; n <= ROWS; n++) {
    // quoted names with commas and quotes: the parser, not a split(","), reads them
    lines.push(`"Lead ${n}, ""Acme""",${STAGES[n % 3]},${n % 5 === 0 ? "Won" : "Open"},lead${n}@example.com,${n * 10},csv-test`);
  }
  fs.writeFileSync(file, `${lines.join("\n")}\n`);
  const args = [file, "--pipeline", "sales", "--verbose", "--chunk-size", "10"];

  // 1. A crash: SIGKILL once two batches are in (the batch in flight may or may not have reached the server).
  const crash = runExample("import-csv.ts", args, clientEnv(s));
  await crash.line(/^row 20:/);
  crash.child.kill("SIGKILL");
  expect((await crash.exit).signal).toBe("SIGKILL");
  const afterCrash = (await imported("csv-test")).length;
  expect(afterCrash).toBeGreaterThanOrEqual(20);
  expect(afterCrash).toBeLessThan(ROWS);
  const saved = JSON.parse(fs.readFileSync(progressFile, "utf8")) as { chunks_done: number; refused: number };
  expect(saved.chunks_done).toBeGreaterThanOrEqual(2);
  expect(saved.refused).toBe(0);

  // 2. Ctrl-C: it resumes after the recorded batches, stops after the batch in flight, says how to resume, exits 130.
  const interrupted = runExample("import-csv.ts", args, clientEnv(s));
  const firstRow = Number(/^row (\d+):/.exec(await interrupted.line(/^row \d+:/))![1]);
  expect(firstRow).toBe(saved.chunks_done * 10 + 1);
  await interrupted.line(new RegExp(`^row ${firstRow + 19}:`));
  interrupted.child.kill("SIGINT");
  const stopped = await interrupted.exit;
  expect(stopped.code).toBe(130);
  expect(interrupted.stderr()).toMatch(/Resuming after batch \d+ \(row \d+ of 150\)/);
  expect(interrupted.stderr()).toMatch(/Interrupted after row \d+ of 150\. Run the same command again to resume/);
  const afterInterrupt = (await imported("csv-test")).length;
  expect(afterInterrupt).toBeLessThan(ROWS);

  // 3. The same command to the end: every remaining row answered, none created twice; the progress file is gone.
  const resumed = runExample("import-csv.ts", args, clientEnv(s));
  expect((await resumed.exit).code).toBe(0);
  expect(resumed.stderr()).toContain(`Imported ${ROWS} of ${ROWS} rows into Sales.`);
  const resumedRows = rowLines(resumed.stdout()).map((l) => Number(/^row (\d+):/.exec(l)![1]));
  expect(resumedRows[0]).toBeGreaterThan(firstRow);
  expect(resumedRows[resumedRows.length - 1]).toBe(ROWS);
  expect(fs.existsSync(progressFile)).toBe(false);

  const items = await imported("csv-test");
  expect(items).toHaveLength(ROWS);
  const byName = new Map(items.map((i) => [i.name, i as Item & Record<string, unknown>]));
  for (let n = 1; n <= ROWS; n++) {
    const item = byName.get(`Lead ${n}, "Acme"`);
    expect(item).toMatchObject({ pipeline: "Sales", stage: STAGES[n % 3], status: n % 5 === 0 ? "Won" : "Open", email: `lead${n}@example.com`, deal_value: n * 10 });
  }
  // A row answered by two runs (the batch in flight at the kill) was answered with the same item both times.
  const firstRun = new Map(rowLines(crash.stdout()).map((l) => [l.split(":")[0], l]));
  for (const l of rowLines(interrupted.stdout())) if (firstRun.has(l.split(":")[0])) expect(l).toBe(firstRun.get(l.split(":")[0]));

  // 4. The whole file again (no progress file): upserts by email, so still one item per row.
  const again = runExample("import-csv.ts", [file, "--pipeline", "Sales"], clientEnv(s));
  expect((await again.exit).code).toBe(0);
  expect(await imported("csv-test")).toHaveLength(ROWS);
}, 120_000);

it("reports and skips the rows that are refused, and imports the others", async () => {
  const file = path.join(dir, "mixed.csv");
  fs.writeFileSync(
    file,
    [
      "name,stage,deal_value:number,source,email",
      "Good one,Lead,100,csv-mixed,one@mixed.example",
      "Bad stage,Nowhere,5,csv-mixed,stage@mixed.example",
      "Bad number,Lead,lots,csv-mixed,number@mixed.example",
      "Good two,Closed,,csv-mixed,two@mixed.example",
      "No email,Lead,,csv-mixed,",
      "",
    ].join("\n"),
  );
  const run = runExample("import-csv.ts", [file, "--pipeline", "Sales"], clientEnv(s));
  expect((await run.exit).code).toBe(1);
  expect(run.stderr()).toMatch(/row 2 \(line 3\) refused: stage "Nowhere" is not a stage of this pipeline/);
  expect(run.stderr()).toMatch(/row 3 \(line 4\) refused: deal_value:number: "lots" is not a number/);
  expect(run.stderr()).toMatch(/row 5 \(line 6\) refused: .+/); // the server's 422 upsert_unavailable: nothing to match on
  expect(run.stderr()).toContain("Imported 2 of 5 rows into Sales; 3 refused");
  expect((await imported("csv-mixed")).map((i) => [i.name, i.stage]).sort()).toEqual([
    ["Good one", "Lead"],
    ["Good two", "Closed"],
  ]);
}, 60_000);

it("creates rows the pipeline cannot match with --create", async () => {
  const file = path.join(dir, "plain.csv");
  fs.writeFileSync(file, ["name,source", "Plain one,csv-plain", "Plain two,csv-plain", "Plain three,csv-plain", ""].join("\n"));
  const run = runExample("import-csv.ts", [file, "--pipeline", "Sales", "--create"], clientEnv(s));
  expect((await run.exit).code).toBe(0);
  expect(run.stderr()).toContain("Imported 3 of 3 rows into Sales.");
  expect((await imported("csv-plain")).map((i) => i.name).sort()).toEqual(["Plain one", "Plain three", "Plain two"]);
}, 60_000);

it("names the missing settings and the usage (exit 2)", async () => {
  const run = runExample("import-csv.ts", ["nothing.csv"], { STAGELINE_URL: "", STAGELINE_API_KEY: "" });
  expect((await run.exit).code).toBe(2);
  expect(run.stderr()).toContain("Usage: import-csv.ts <file.csv> --pipeline <name or id>");
});
