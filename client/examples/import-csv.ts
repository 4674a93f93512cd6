/**
 * Example: import items from a CSV file into a pipeline, with a progress bar, resumable.
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
 * Resumable: every row is created with the Idempotency-Key `csv-import:<pipeline id>:<SHA-256 of the file>:<row>`, so
 * running the same command again after a crash, a lost connection or Ctrl-C creates no row twice: the server
 * answers the rows it has seen with their first answer (for 24 hours, CONTRACT "Idempotency"). A changed file is
 * a new import (another hash). Rows are sent one at a time, in file order; the client waits out the rate limit.
 *
 * Output: a progress bar on stderr when it is a terminal; `--verbose` prints `row <n>: <short id> <name>` per row on
 * stdout. A row the server refuses (400/422) is reported on stderr and skipped. Exit status: 0 every row is in,
 * 1 some rows were refused or the import stopped on an error (run it again to resume), 2 usage, 130 interrupted.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import { parseArgs } from "node:util";
import { MultiBar, Presets, type SingleBar } from "cli-progress";
import { parse, type Options as CsvOptions } from "csv-parse";
import { ConnectionError, StagelineError, ValidationError, type ItemCreate, type Stageline } from "@stageline/client";
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

/** True for an error that concerns the row alone: a cell or name of ours, or the server's 400/422 for it. */
function refusal(err: unknown): boolean {
  if (err instanceof ValidationError) return true;
  return !(err instanceof StagelineError || err instanceof ConnectionError);
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

/** The Idempotency-Key of row `row` (1-based, header excluded) of the file with hash `sha256` into `pipelineId`. */
export function rowKey(pipelineId: string, sha256: string, row: number): string {
  return `csv-import:${pipelineId}:${sha256}:${row}`;
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    options: { pipeline: { type: "string" }, verbose: { type: "boolean", default: false } },
    allowPositionals: true,
  });
  const file = positionals[0];
  if (!file || !values.pipeline || positionals.length > 1) throw new UsageError("Usage: import-csv.ts <file.csv> --pipeline <name or id> [--verbose]");
  const client = clientFromEnv();
  const pipeline = await findPipeline(client, values.pipeline);
  const { sha256, rows, headers } = await scanCsv(file);
  const columns = fieldColumns(headers);
  const shape = new PipelineShape(client, pipeline.id);

  let interrupted = false;
  process.on("SIGINT", () => {
    if (interrupted) process.exit(130); // a second Ctrl-C: stop at once (still safe to re-run)
    interrupted = true;
  });
  const progress = new Progress(rows);
  let done = 0;
  try {
    for await (const { record, info } of fs.createReadStream(file).pipe(parse(CSV_OPTIONS)) as AsyncIterable<CsvRecord>) {
      if (interrupted) break;
      const row = info.records;
      try {
        const item = await client.items.create(await bodyOf(record, columns, shape), { idempotencyKey: rowKey(pipeline.id, sha256, row) });
        if (values.verbose) process.stdout.write(`row ${row}: ${item.short_id} ${item.name}\n`);
      } catch (err) {
        // A refused row (a cell that does not fit, an unknown stage, 400/422 from the server) is reported and
        // skipped; anything else (auth, network after the retries, 5xx) stops the import, which re-running resumes.
        if (!refusal(err)) throw err;
        progress.refuse(`row ${row} (line ${info.lines}) refused: ${(err as Error).message}`);
      }
      done = row;
      progress.update(row);
    }
  } catch (err) {
    progress.stop();
    process.stderr.write(`Stopped after row ${done} of ${rows}: ${(err as Error).message}\nRun the same command again to resume: rows already imported are not created twice.\n`);
    return 1;
  }
  const refused = progress.refused;
  progress.stop();
  if (interrupted) {
    process.stderr.write(`Interrupted after row ${done} of ${rows}. Run the same command again to resume: rows already imported are not created twice.\n`);
    return 130;
  }
  process.stderr.write(`Imported ${rows - refused} of ${rows} rows into ${pipeline.name}${refused ? `; ${refused} refused (see above)` : ""}.\n`);
  return refused ? 1 : 0;
}

if (require.main === module) runMain(main);
