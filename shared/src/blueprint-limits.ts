/**
 * The blueprint size policy (CONTRACT "Pipelines, blueprints, transitions"; issue 19): a pipeline file (the
 * blueprint an admin imports: name, stages with their statuses, custom fields, duplicate detection) has at most
 *
 * - 50 stages,
 * - 20 statuses per stage,
 * - 100 custom fields,
 * - 100 options per select field,
 * - 64 KB (65,536 bytes) of JSON: the UTF-8 bytes of the file's JSON text as `JSON.stringify` writes it (no
 *   indentation, so the file's own whitespace does not count).
 *
 * A file beyond any of them is refused before anything else is checked or stored, with `422 validation_failed`
 * whose `errors[]` name each limit exceeded, in the API (admin API), the console and the admin CLI alike, because all
 * three import through services/pipeline-import.ts, which calls `enforceBlueprintLimits` first. Why: an unbounded
 * blueprint (5,000 stages and 5,000 fields, 436 KB) took 26 s to import and then exhausted the heap wherever the
 * pipeline was read.
 */
import { DomainError, type ProblemFieldError } from "./errors";

/** CONTRACT "Pipelines, blueprints, transitions": the limits of one pipeline file (blueprint). */
export const BLUEPRINT_LIMITS = {
  /** Stages of one pipeline. */
  stages: 50,
  /** Statuses of one stage. */
  statusesPerStage: 20,
  /** Custom fields of one pipeline. */
  customFields: 100,
  /** Options of one `select` custom field. */
  optionsPerSelectField: 100,
  /** Bytes of the file's JSON text (UTF-8, as `JSON.stringify` writes it): 64 KB. */
  jsonBytes: 64 * 1024,
} as const;

/** The HTTP status of a blueprint over its limits: a well-formed file the server will not store (CONTRACT: 422). */
export const BLUEPRINT_LIMIT_STATUS = 422;

/** UTF-8 length of `value` as `JSON.stringify` writes it (0 for a value JSON cannot hold, e.g. `undefined`). */
export function blueprintJsonBytes(value: unknown): number {
  const text = JSON.stringify(value);
  return text === undefined ? 0 : new TextEncoder().encode(text).length;
}

/**
 * Every limit of {@link BLUEPRINT_LIMITS} that `file` (a parsed pipeline file, not yet validated) exceeds, as problem
 * `errors` entries whose `path` is the list over its limit (`stages`, `stages[3].statuses`, `custom_fields`,
 * `custom_fields[2].options`; "" for the size) and whose `message` names the limit. Lists of the wrong type are left
 * to the schema (PipelineImportSchema). Cheap: one serialisation and one pass over the lists.
 * @returns an empty array when `file` is within every limit.
 */
export function blueprintLimitErrors(file: unknown): ProblemFieldError[] {
  const errors: ProblemFieldError[] = [];
  const bytes = blueprintJsonBytes(file);
  if (bytes > BLUEPRINT_LIMITS.jsonBytes) {
    errors.push({
      path: "",
      message: `The blueprint is ${bytes.toLocaleString("en-US")} bytes of JSON; the limit is 64 KB (${BLUEPRINT_LIMITS.jsonBytes.toLocaleString("en-US")} bytes).`,
    });
  }
  if (!file || typeof file !== "object") return errors;
  const { stages, custom_fields: fields } = file as { stages?: unknown; custom_fields?: unknown };
  if (Array.isArray(stages)) {
    if (stages.length > BLUEPRINT_LIMITS.stages) {
      errors.push({ path: "stages", message: `The blueprint has ${stages.length} stages; the limit is ${BLUEPRINT_LIMITS.stages} stages.` });
    }
    stages.forEach((stage: unknown, index) => {
      const statuses = (stage as { statuses?: unknown } | null)?.statuses;
      if (Array.isArray(statuses) && statuses.length > BLUEPRINT_LIMITS.statusesPerStage) {
        errors.push({
          path: `stages[${index}].statuses`,
          message: `Stage ${index + 1} has ${statuses.length} statuses; the limit is ${BLUEPRINT_LIMITS.statusesPerStage} statuses per stage.`,
        });
      }
    });
  }
  if (Array.isArray(fields)) {
    if (fields.length > BLUEPRINT_LIMITS.customFields) {
      errors.push({
        path: "custom_fields",
        message: `The blueprint has ${fields.length} custom fields; the limit is ${BLUEPRINT_LIMITS.customFields} custom fields.`,
      });
    }
    fields.forEach((field: unknown, index) => {
      const options = (field as { options?: unknown } | null)?.options;
      if (Array.isArray(options) && options.length > BLUEPRINT_LIMITS.optionsPerSelectField) {
        errors.push({
          path: `custom_fields[${index}].options`,
          message: `Custom field ${index + 1} has ${options.length} options; the limit is ${BLUEPRINT_LIMITS.optionsPerSelectField} options per select field.`,
        });
      }
    });
  }
  return errors;
}

/**
 * Refuses a pipeline file beyond {@link BLUEPRINT_LIMITS}; call it before parsing or storing anything.
 * @param what names the input in the error's `detail`, e.g. "pipeline file".
 * @throws DomainError `validation_failed` with status 422 ({@link BLUEPRINT_LIMIT_STATUS}), `errors` naming each
 *   limit exceeded.
 */
export function enforceBlueprintLimits(file: unknown, what = "pipeline file"): void {
  const errors = blueprintLimitErrors(file);
  if (errors.length === 0) return;
  const named = errors.map((e) => e.message).slice(0, 3).join(" ");
  throw new DomainError("validation_failed", `The ${what} is over the blueprint limits. ${named}`, { errors }, BLUEPRINT_LIMIT_STATUS);
}
