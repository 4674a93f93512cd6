/**
 * Example: import items from a CSV file into a pipeline with batch upsert, a progress bar, resumable after a kill.
 *
 *   STAGELINE_URL=http://127.0.0.1:3000 STAGELINE_API_KEY=sl_... npx tsx import-csv.ts leads.csv --pipeline Sales
 *
 * The CSV has a header row. Columns:
 *   name                   the item's name (required)
 *   stage, status          names as in the pipeline (optional: the first stage, and the stage's default status)
 *   contact_id, source     the built-in fields (source defaults to "csv-import")
 *   any other column       a custom field of the pipeline, sent as text; `key:number` and `key:boolean` in the
 *                          header send numbers and booleans (e.g. `deal_value:number`). Empty cells are left out.
 *
 * Batches: the rows go as `upsert` operations (create, or update the item the pipeline's duplicate detection matches,
 * e.g. by `email`: importing the file again updates instead of duplicating) through `items.batchAll`, 100 rows per
 * request (`--chunk-size`), so 10,000 rows are 100 requests: under two windows of the 60-per-minute limit (the
 * server's time per batch decides the rest: test/client-examples/measure-import.ts).
 * `--create` sends `create` operations instead (for a pipeline without duplicate detection).
 *
 * Resumable: after each batch, `<file>.import-progress.json` (`--progress-file`) records how many batches are done.
 * Run the same command again after a kill, a crash, a lost connection or Ctrl-C and the import continues with the
 * first unfinished batch; that one goes with the same `Idempotency-Key` as before
 * (`csv-import:<pipeline id>:<SHA-256 of the file>:<mode>:<chunk size>:<batch>`), so if the server had applied it
 * already it answers with its first response instead of applying it again (keys are kept 24 hours). The progress file
 * is removed when the import completes. A changed file is a new import (another hash: the progress file is ignored).
 *
 * Output: a progress bar on stderr when it is a terminal; `--verbose` prints `row <n>: <short id> <name>` per row on
 * stdout, batch by batch. A row refused by the script (a cell that does not fit, an unknown stage) or by the server
 * (its 400/422 in the batch's results) is reported on stderr and skipped. Exit status: 0 every row is in, 1 some rows
 * were refused or the import stopped on an error (run it again to resume), 2 usage, 130 interrupted.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import { parseArgs } from "node:util";
import { MultiBar, Presets, type SingleBar } from "cli-progress";
import { parse, type Options as CsvOptions } from "csv-parse";
import type { BatchProgress, ItemBatchOperation, ItemBatchResult, ItemCreate, Stageline } from "@stageline/client";
import { clientFromEnv, findPipeline, runMain, UsageError } from "./lib/connect";

/** csv-parse settings: header row, blank lines skipped, cells trimmed, each record with its position. */
const CSV_OPTIONS: CsvOptions = { columns: true, skip_empty_lines: true, trim: true, bom: true, info: true };

/** Columns that map to built-in item fields rather than custom fields. */
const BUILT_IN = new Set(["name", "stage", "status", "contact_id", "source"]);

/** One custom-field column: header `key` or `key:type`. */
interface FieldColumn {
  header: string;
  key: string;
  type: "text" | "number" | "boolean";
}

/** A parsed record as csv-parse gives it with `info: true`. */
interface CsvRecord {
  record: Record<string, string>;
  info: { records: number; lines: number };
}

/**
 * The file's SHA-256 (hex), its number of data rows and its column names (from the first row), read once as a
 * stream.
 * @throws the parser's error (with its line) for a malformed file.
 */
export async function scanCsv(file: string): Promise<{ sha256: string; rows: number; headers: string[] }> {
  const hash = crypto.createHash("sha256");
  const source = fs.createReadStream(file);
  source.on("data", (chunk) => hash.update(chunk));
  let rows = 0;
  let headers: string[] = [];
  for await (const { record } of source.pipe(parse(CSV_OPTIONS)) as AsyncIterable<CsvRecord>) {
    if (rows === 0) headers = Object.keys(record);
    rows++;
  }
  return { sha256: hash.digest("hex"), rows, headers };
}

/**
 * The custom-field columns of a header row.
 * @throws UsageError when `name` is missing or a column names an unknown type.
 */
export function fieldColumns(headers: string[]): FieldColumn[] {
  if (headers.length && !headers.includes("name")) throw new UsageError(`The CSV needs a "name" column (it has: ${headers.join(", ")}).`);
  return headers
    .filter((h) => !BUILT_IN.has(h))
    .map((header) => {
      const [key, type = "text"] = header.split(":").map((s) => s.trim());
      if (type !== "text" && type !== "number" && type !== "boolean") throw new UsageError(`Column "${header}": the type must be text, number or boolean.`);
      return { header, key: key!, type };
    });
}

/**
 * A cell as the value its column's type asks for.
 * @throws Error naming the column when a number or boolean cell does not read as one.
 */
function cellValue(column: FieldColumn, cell: string): string | number | boolean {
  if (column.type === "number") {
    const n = Number(cell);
    if (cell === "" || !Number.isFinite(n)) throw new Error(`${column.header}: "${cell}" is not a number`);
    return n;
  }
  if (column.type === "boolean") {
    const v = cell.toLowerCase();
    if (["true", "yes", "1"].includes(v)) return true;
    if (["false", "no", "0"].includes(v)) return false;
    throw new Error(`${column.header}: "${cell}" is not true or false`);
  }
  return cell;
}

/** Stage and status ids by name (case-insensitive), read once per stage. */
class PipelineShape {
  private stages?: Map<string, string>;
  private firstStageId?: string;
  private readonly statuses = new Map<string, Map<string, string>>();

  constructor(
    private readonly client: Stageline,
    readonly pipelineId: string,
  ) {}

  /** The stage id for `name` (the first stage when empty). @throws Error for an unknown stage name. */
  async stageId(name: string): Promise<string> {
    if (!this.stages) {
      const stages = await this.client.pipelines.stages(this.pipelineId);
      this.stages = new Map(stages.map((s) => [s.name.toLowerCase(), s.id]));
      this.firstStageId = stages[0]?.id;
    }
    const id = name ? this.stages.get(name.toLowerCase()) : this.firstStageId;
    if (!id) throw new Error(name ? `stage "${name}" is not a stage of this pipeline (${[...this.stages.keys()].join(", ")})` : "the pipeline has no stage");
    return id;
  }

  /** The status id for `name` in stage `stageId`. @throws Error for an unknown status name. */
  async statusId(stageId: string, name: string): Promise<string> {
    let byName = this.statuses.get(stageId);
    if (!byName) {
      byName = new Map((await this.client.pipelines.statuses(this.pipelineId, stageId)).map((s) => [s.name.toLowerCase(), s.id]));
      this.statuses.set(stageId, byName);
    }
    const id = byName.get(name.toLowerCase());
    if (!id) throw new Error(`status "${name}" is not a status of that stage (${[...byName.keys()].join(", ")})`);
    return id;
  }
}

/**
 * The create body of one CSV record: deterministic, so a re-run sends the very body the key was first used with.
 * @throws Error for a cell that does not fit its column or an unknown stage or status name.
 */
async function bodyOf(record: Record<string, string>, columns: FieldColumn[], shape: PipelineShape): Promise<ItemCreate> {
  if (!record.name) throw new Error("name is empty");
  const stageId = await shape.stageId(record.stage ?? "");
  const metadata: Record<string, string | number | boolean> = {};
  for (const column of columns) {
    const cell = record[column.header] ?? "";
    if (cell !== "") metadata[column.key] = cellValue(column, cell);
  }
  return {
    name: record.name,
    pipeline_id: shape.pipelineId,
    stage_id: stageId,
    ...(record.status ? { status_id: await shape.statusId(stageId, record.status) } : {}),
    ...(record.contact_id ? { contact_id: record.contact_id } : {}),
    source: record.source || "csv-import",
    ...(columns.length ? { metadata } : {}),
  };
}

/**
 * The progress bar on stderr (drawn only when stderr is a terminal) and the refused rows' messages, printed above
 * the bar on a terminal and as plain lines otherwise.
 */
class Progress {
  refused = 0;
  private readonly bars = new MultiBar({ format: "Importing |{bar}| {value}/{total} rows | {refused} refused | ETA {eta_formatted}", stream: process.stderr }, Presets.shades_classic);
  private readonly bar: SingleBar;

  constructor(total: number) {
    this.bar = this.bars.create(total, 0, { refused: 0 });
  }

  update(row: number): void {
    this.bar.update(row, { refused: this.refused });
  }

  refuse(message: string): void {
    this.refused++;
    if (process.stderr.isTTY) this.bars.log(`${message}\n`);
    else process.stderr.write(`${message}\n`);
  }

  stop(): void {
    this.bars.stop();
  }
}

/** What the progress file holds: which import it belongs to and how far it got. */
interface ImportProgress {
  /** The import's key (pipeline, file hash, mode, chunk size): a progress file of another import is ignored. */
  key: string;
  /** Batches finished, from the first. */
  chunks_done: number;
  /** Rows of those batches the server refused (so the summary counts them after a resume). */
  refused: number;
}

/**
 * The key every batch's `Idempotency-Key` derives from (`<key>:<batch number>`): the same file into the same pipeline
 * in the same mode and chunk size makes the same batches, so a re-run sends the very bodies the keys were used with.
 */
export function importKey(pipelineId: string, sha256: string, mode: "upsert" | "create", chunkSize: number): string {
  return `csv-import:${pipelineId}:${sha256}:${mode}:${chunkSize}`;
}

/** The progress recorded for import `key` in `file`, or none (no file, another import's, unreadable). */
export function readProgress(file: string, key: string): ImportProgress | null {
  try {
    const progress = JSON.parse(fs.readFileSync(file, "utf8")) as ImportProgress;
    return progress.key === key && Number.isInteger(progress.chunks_done) && progress.chunks_done >= 0 ? progress : null;
  } catch {
    return null;
  }
}

/** Records `progress` in `file` atomically (a kill leaves the old file or the new one, never half of one). */
function writeProgress(file: string, progress: ImportProgress): void {
  const temporary = `${file}.tmp`;
  fs.writeFileSync(temporary, JSON.stringify(progress));
  fs.renameSync(temporary, file);
}

/** Where a CSV row came from: its row number (1-based, header excluded), line and name. */
interface RowOrigin {
  row: number;
  line: number;
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    options: {
      pipeline: { type: "string" },
      verbose: { type: "boolean", default: false },
      create: { type: "boolean", default: false },
      "chunk-size": { type: "string", default: "100" },
      "progress-file": { type: "string" },
    },
    allowPositionals: true,
  });
  const file = positionals[0];
  const usage = "Usage: import-csv.ts <file.csv> --pipeline <name or id> [--create] [--chunk-size 1..100] [--progress-file <path>] [--verbose]";
  const chunkSize = Number(values["chunk-size"]);
  if (!file || !values.pipeline || positionals.length > 1 || !Number.isInteger(chunkSize) || chunkSize < 1 || chunkSize > 100) throw new UsageError(usage);
  const client = clientFromEnv();
  const pipeline = await findPipeline(client, values.pipeline);
  const { sha256, rows, headers } = await scanCsv(file);
  const columns = fieldColumns(headers);
  const shape = new PipelineShape(client, pipeline.id);
  const mode = values.create ? "create" : "upsert";
  const key = importKey(pipeline.id, sha256, mode, chunkSize);
  const progressFile = values["progress-file"] ?? `${file}.import-progress.json`;

  const progress = new Progress(rows);
  // Every row's operation, in file order (deterministic: a re-run builds the same batches); the rows the script
  // refuses are reported here, on every run, and never sent.
  const operations: ItemBatchOperation[] = [];
  const origins: RowOrigin[] = [];
  for await (const { record, info } of fs.createReadStream(file).pipe(parse(CSV_OPTIONS)) as AsyncIterable<CsvRecord>) {
    try {
      operations.push({ op: mode, ref: String(info.records), ...(await bodyOf(record, columns, shape)) });
      origins.push({ row: info.records, line: info.lines });
    } catch (err) {
      progress.refuse(`row ${info.records} (line ${info.lines}) refused: ${(err as Error).message}`);
    }
  }

  const saved = readProgress(progressFile, key);
  const startChunk = saved?.chunks_done ?? 0;
  let serverRefused = saved?.refused ?? 0;
  progress.refused += serverRefused;
  const rowsBefore = (chunk: number) => (chunk * chunkSize < origins.length ? origins[chunk * chunkSize]!.row - 1 : rows);
  progress.update(rowsBefore(startChunk));
  if (startChunk > 0) process.stderr.write(`Resuming after batch ${startChunk} (row ${rowsBefore(startChunk)} of ${rows}), from ${progressFile}.\n`);

  const interrupt = new AbortController();
  process.on("SIGINT", () => {
    if (interrupt.signal.aborted) process.exit(130); // a second Ctrl-C: stop at once (still safe to re-run)
    interrupt.abort(new Error("interrupted"));
  });
  let done = rowsBefore(startChunk);
  const onProgress = ({ chunk, results }: BatchProgress<ItemBatchResult>) => {
    const refusals: string[] = [];
    const lines: string[] = [];
    for (const result of results) {
      const origin = origins[result.index]!;
      if (result.status >= 400) refusals.push(`row ${origin.row} (line ${origin.line}) refused: ${result.problem?.detail || result.problem?.title || `status ${result.status}`}`);
      else if (values.verbose && result.item) lines.push(`row ${origin.row}: ${result.item.short_id} ${result.item.name}\n`);
    }
    serverRefused += refusals.length;
    // Recorded before anything is printed: a row shown as imported is in a batch the progress file counts.
    writeProgress(progressFile, { key, chunks_done: chunk + 1, refused: serverRefused });
    for (const message of refusals) progress.refuse(message);
    if (lines.length) process.stdout.write(lines.join(""));
    done = rowsBefore(chunk + 1);
    progress.update(done);
  };
  try {
    await client.items.batchAll(operations, { size: chunkSize, idempotencyKey: key, startChunk, onProgress, signal: interrupt.signal });
  } catch (err) {
    progress.stop();
    if (interrupt.signal.aborted) {
      process.stderr.write(`Interrupted after row ${done} of ${rows}. Run the same command again to resume: finished batches are not sent again.\n`);
      return 130;
    }
    process.stderr.write(`Stopped after row ${done} of ${rows}: ${(err as Error).message}\nRun the same command again to resume: finished batches are not sent again.\n`);
    return 1;
  }
  fs.rmSync(progressFile, { force: true });
  const refused = progress.refused;
  progress.stop();
  process.stderr.write(`Imported ${rows - refused} of ${rows} rows into ${pipeline.name}${refused ? `; ${refused} refused (see above)` : ""}.\n`);
  return refused ? 1 : 0;
}

if (require.main === module) runMain(main);
