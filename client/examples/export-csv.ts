/**
 * Example: export every item of a pipeline to a CSV file, streaming.
 *
 *   STAGELINE_URL=http://127.0.0.1:3000 STAGELINE_API_KEY=sl_... npx tsx export-csv.ts --pipeline Sales --out sales.csv
 *
 * `items.iterate` fetches one page at a time, only when the loop reaches it, and each item is written to the file as
 * it comes; when the file cannot take more (`write` returns false) the loop waits for `drain` before asking for the
 * next item. So memory stays flat however many items the pipeline holds, and a slow disk slows the export instead
 * of filling memory.
 *
 * Columns: the item's fields in the API's order (item_id, short_id, name, pipeline, pipeline_id, stage, stage_id,
 * status, status_id, contact_id, source, the pipeline's custom fields, created_at, updated_at, version), taken from
 * the first item (every item of a pipeline has the same fields). Empty cells for null. Newest items first.
 * `--out -` writes to stdout. Exit status: 0 done, 1 an error (the file is then incomplete), 2 usage.
 */
import fs from "node:fs";
import { once } from "node:events";
import { pipeline } from "node:stream/promises";
import { parseArgs } from "node:util";
import { stringify } from "csv-stringify";
import type { Item, Stageline } from "@stageline/client";
import { clientFromEnv, findPipeline, runMain, UsageError } from "./lib/connect";

/** The columns of an empty pipeline's file (the built-in fields; custom fields are unknown without an item). */
const BUILT_IN_COLUMNS = ["item_id", "short_id", "name", "pipeline", "pipeline_id", "stage", "stage_id", "status", "status_id", "contact_id", "source", "created_at", "updated_at", "version"];

/** A field value as a CSV cell: empty for null, JSON for objects and arrays, text otherwise. */
function cell(value: unknown): string {
  if (value === null || value === undefined) return "";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

/**
 * Writes every item of `pipelineId` to `out` as CSV (header row first), newest first, honouring backpressure, and
 * ends the stream when `out` is not stdout.
 * @returns the number of items written.
 * @throws the client's errors (StagelineError, ConnectionError) or the stream's write error.
 */
export async function exportPipeline(client: Stageline, pipelineId: string, out: NodeJS.WritableStream): Promise<number> {
  const csv = stringify();
  // pipeline() forwards the file's backpressure and errors to `csv`; stdout is left open.
  const piped = pipeline(csv, out, { end: out !== process.stdout });
  piped.catch(() => undefined); // awaited below; this only keeps an early failure from counting as unhandled
  const write = async (row: string[]) => {
    if (!csv.write(row)) await Promise.race([once(csv, "drain"), piped]);
  };
  let columns: string[] | undefined;
  let count = 0;
  try {
    for await (const item of client.items.iterate({ pipeline_id: pipelineId })) {
      if (!columns) {
        columns = Object.keys(item);
        await write(columns);
      }
      const record = item as Item & Record<string, unknown>;
      await write(columns.map((c) => cell(record[c])));
      count++;
    }
    if (!columns) await write(BUILT_IN_COLUMNS);
  } catch (err) {
    csv.destroy(err as Error);
    throw err;
  }
  csv.end();
  await piped;
  return count;
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { pipeline: { type: "string" }, out: { type: "string" } } });
  if (!values.pipeline || !values.out) throw new UsageError("Usage: export-csv.ts --pipeline <name or id> --out <file.csv | ->");
  const client = clientFromEnv();
  const pipeline = await findPipeline(client, values.pipeline);
  const out = values.out === "-" ? process.stdout : fs.createWriteStream(values.out);
  const count = await exportPipeline(client, pipeline.id, out);
  process.stderr.write(`Exported ${count} items of ${pipeline.name}${values.out === "-" ? "" : ` to ${values.out}`}.\n`);
  return 0;
}

if (require.main === module) runMain(main);
