import { z } from "zod";
import { dateTimeField, quoteSome, textField } from "./fields";
import { BLUEPRINT_LIMITS } from "./blueprint-limits";
import { LONG_TEXT_MAX, NAME_MAX, URL_MAX } from "./limits";

/** CONTRACT "Pipelines, blueprints, transitions": the types a custom field can have. */
export const CUSTOM_FIELD_TYPES = ["text", "email", "number", "boolean", "date", "datetime", "url", "phone", "select"] as const;
/** One custom field type. */
export type CustomFieldType = (typeof CUSTOM_FIELD_TYPES)[number];

/** CONTRACT "Pipelines, blueprints, transitions": a custom field type name. */
export const CustomFieldTypeSchema = z.enum(CUSTOM_FIELD_TYPES, {
  error: `type must be one of: ${CUSTOM_FIELD_TYPES.join(", ")}.`,
});

/**
 * Spec "Item (response)" and CONTRACT "Responses" (extra Item fields): every built-in key of the Item object,
 * plus the keys the contract adds to item payloads (`matched_on` of duplicate matches, `changed_fields` and
 * `previous` of item.updated / item.stage_changed events). Custom field keys may not collide with these.
 */
export const BUILT_IN_ITEM_FIELDS = [
  "item_id",
  "short_id",
  "name",
  "pipeline",
  "pipeline_id",
  "stage",
  "stage_id",
  "status",
  "status_id",
  "contact_id",
  "source",
  "created_at",
  "updated_at",
  "version",
  "matched_on",
  "changed_fields",
  "previous",
] as const;
/** One built-in (or reserved) Item key. */
export type BuiltInItemField = (typeof BUILT_IN_ITEM_FIELDS)[number];

/**
 * Keys a custom field may not use: the built-in Item keys, plus `metadata` (the request field that carries
 * custom values; a custom field of that name would be ambiguous in create and update bodies).
 */
export const RESERVED_CUSTOM_FIELD_KEYS: readonly string[] = [...BUILT_IN_ITEM_FIELDS, "metadata"];

/** Built-in Item fields that duplicate detection can compare, beside the custom fields. */
export const DUPLICATE_DETECTION_BUILT_IN_FIELDS = ["name", "contact_id", "source"] as const;

/** Custom field keys: lower-case letter first, then lower-case letters, digits or `_`, at most 63 characters. */
export const CUSTOM_FIELD_KEY_PATTERN = /^[a-z][a-z0-9_]{0,62}$/;

/** CONTRACT "Pipelines, blueprints, transitions": a custom field key (not checked for collisions here; see BlueprintSchema). */
export const CustomFieldKeySchema = z
  .string({ error: "key is required and must be text." })
  .regex(CUSTOM_FIELD_KEY_PATTERN, {
    error: (iss) =>
      `Custom field key ${JSON.stringify(iss.input)} is not valid: start with a lower-case letter and use only a-z, 0-9 and _ (at most 63 characters), e.g. deal_value.`,
  });

/**
 * CONTRACT "Pipelines, blueprints, transitions": one custom field of a pipeline blueprint,
 * `{ key, label, type, required?, options? }`. `options` lists the allowed values of a `select` field and
 * is required (non-empty, no repeats) for `select`, not allowed for other types.
 */
export const CustomFieldSchema = z
  .strictObject({
    key: CustomFieldKeySchema,
    label: textField("label"),
    type: CustomFieldTypeSchema,
    required: z.boolean({ error: "required must be true or false." }).optional(),
    options: z.array(textField("option"), { error: "options must be a list of text values." }).optional(),
  })
  .superRefine((field, ctx) => {
    if (field.type === "select") {
      if (field.options === undefined || field.options.length === 0) {
        ctx.addIssue({
          code: "custom",
          path: ["options"],
          message: `Select field "${field.key}" needs options: a non-empty list of the allowed values.`,
        });
      } else {
        const repeated = findRepeats(field.options);
        if (repeated.length > 0) {
          ctx.addIssue({
            code: "custom",
            path: ["options"],
            message: `Select field "${field.key}" lists ${quoteList(repeated)} more than once; list each option once.`,
          });
        }
      }
    } else if (field.options !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["options"],
        message: `options are only allowed on select fields; remove them from "${field.key}" (type ${field.type}).`,
      });
    }
  });
/** A custom field definition. */
export type CustomField = z.infer<typeof CustomFieldSchema>;

/** CONTRACT "Pipelines, blueprints, transitions": duplicate-detection configuration, `{ fields, match: "any" | "all" }`. */
export const DuplicateDetectionSchema = z.strictObject({
  fields: z
    .array(z.string({ error: "Each duplicate-detection field must be a field key (text)." }), {
      error: "fields must be a list of field keys.",
    })
    .min(1, { error: "fields must name at least one field to compare." }),
  match: z.enum(["any", "all"], { error: 'match must be "any" or "all".' }),
});
/** Duplicate-detection configuration. */
export type DuplicateDetection = z.infer<typeof DuplicateDetectionSchema>;

/** Cross-field rules shared by BlueprintSchema and PipelineImportSchema. */
function checkBlueprint(
  blueprint: { custom_fields?: readonly CustomField[] | undefined; duplicate_detection?: DuplicateDetection | undefined },
  ctx: z.core.$RefinementCtx<unknown>,
): void {
  const fields = blueprint.custom_fields ?? [];
  const seen = new Set<string>();
  fields.forEach((field, index) => {
    if (RESERVED_CUSTOM_FIELD_KEYS.includes(field.key)) {
      ctx.addIssue({
        code: "custom",
        path: ["custom_fields", index, "key"],
        message: `Custom field key "${field.key}" is a built-in item field; choose another key, e.g. "custom_${field.key}".`,
      });
    }
    if (seen.has(field.key)) {
      ctx.addIssue({
        code: "custom",
        path: ["custom_fields", index, "key"],
        message: `Custom field key "${field.key}" is used more than once; each key must be unique.`,
      });
    }
    seen.add(field.key);
  });
  const detection = blueprint.duplicate_detection;
  if (detection !== undefined) {
    const known: readonly string[] = [...DUPLICATE_DETECTION_BUILT_IN_FIELDS, ...seen];
    detection.fields.forEach((key, index) => {
      if (!known.includes(key)) {
        ctx.addIssue({
          code: "custom",
          path: ["duplicate_detection", "fields", index],
          message: `Duplicate detection field "${key}" is neither a custom field nor one of ${DUPLICATE_DETECTION_BUILT_IN_FIELDS.join(", ")}.`,
        });
      }
    });
    const repeated = findRepeats(detection.fields);
    if (repeated.length > 0) {
      ctx.addIssue({
        code: "custom",
        path: ["duplicate_detection", "fields"],
        message: `Duplicate detection lists ${quoteList(repeated)} more than once; list each field once.`,
      });
    }
  }
}

/**
 * CONTRACT "Pipelines, blueprints, transitions": a pipeline's blueprint, its custom fields and optional
 * duplicate-detection configuration. Custom field keys are unique and do not collide with
 * RESERVED_CUSTOM_FIELD_KEYS; duplicate detection names only known fields. `{}` parses (no custom fields).
 */
export const BlueprintSchema = z
  .strictObject({
    custom_fields: z.array(CustomFieldSchema, { error: "custom_fields must be a list of field definitions." }).default(() => []),
    duplicate_detection: DuplicateDetectionSchema.optional(),
  })
  .superRefine(checkBlueprint);
/** A parsed blueprint (custom_fields always present). */
export type Blueprint = z.infer<typeof BlueprintSchema>;

/** CONTRACT "Pipelines, blueprints, transitions": the statuses a stage gets when the import file lists none (the spec's sample statuses). */
export const DEFAULT_STATUSES = ["Open", "Won", "Lost"] as const;

/** `short_id` prefixes: 1..10 upper-case letters or digits (CONTRACT: `short_id` such as `SALES-42`). */
export const SHORT_ID_PREFIX_PATTERN = /^[A-Z0-9]{1,10}$/;

/** One stage of a pipeline import file: its name and ordered statuses (the first is the default status). */
export const PipelineImportStageSchema = z
  .strictObject({
    name: textField("Stage name"),
    statuses: z
      .array(textField("Status name"), { error: "statuses must be a list of status names." })
      .min(1, { error: "statuses must list at least one status, or be left out for Open, Won, Lost." })
      .max(BLUEPRINT_LIMITS.statusesPerStage, { error: `A stage has at most ${BLUEPRINT_LIMITS.statusesPerStage} statuses.` })
      .default(() => [...DEFAULT_STATUSES]),
  })
  .superRefine((stage, ctx) => {
    const repeated = findRepeats(stage.statuses);
    if (repeated.length > 0) {
      ctx.addIssue({
        code: "custom",
        path: ["statuses"],
        message: `Stage "${stage.name}" lists status ${quoteList(repeated)} more than once; status names must be unique within a stage.`,
      });
    }
  });
/** A stage of an import file. */
export type PipelineImportStage = z.infer<typeof PipelineImportStageSchema>;

/**
 * CONTRACT "Pipelines, blueprints, transitions": the file read by the admin `pipelines import` command and the
 * console's import. Stages are in order; stage names are unique within the pipeline; the blueprint rules of
 * BlueprintSchema apply; every list is bounded by BLUEPRINT_LIMITS (blueprint-limits.ts; the import checks those
 * limits, and the 64 KB of JSON, with `enforceBlueprintLimits` before this schema, to answer them with 422).
 */
export const PipelineImportSchema = z
  .strictObject({
    name: textField("name"),
    short_id_prefix: z
      .string({ error: "short_id_prefix must be text." })
      .regex(SHORT_ID_PREFIX_PATTERN, {
        error: "short_id_prefix must be 1 to 10 upper-case letters or digits, e.g. SALES.",
      })
      .optional(),
    stages: z
      .array(PipelineImportStageSchema, { error: "stages must be a list of stages." })
      .min(1, { error: "stages must list at least one stage." })
      .max(BLUEPRINT_LIMITS.stages, { error: `stages lists at most ${BLUEPRINT_LIMITS.stages} stages.` }),
    custom_fields: z
      .array(CustomFieldSchema, { error: "custom_fields must be a list of field definitions." })
      .max(BLUEPRINT_LIMITS.customFields, { error: `custom_fields lists at most ${BLUEPRINT_LIMITS.customFields} fields.` })
      .optional(),
    duplicate_detection: DuplicateDetectionSchema.optional(),
  })
  .superRefine((pipeline, ctx) => {
    const repeated = findRepeats(pipeline.stages.map((s) => s.name));
    if (repeated.length > 0) {
      ctx.addIssue({
        code: "custom",
        path: ["stages"],
        message: `Stage ${quoteList(repeated)} appears more than once; stage names must be unique within a pipeline.`,
      });
    }
    checkBlueprint(pipeline, ctx);
    pipeline.custom_fields?.forEach((field, index) => {
      if ((field.options?.length ?? 0) > BLUEPRINT_LIMITS.optionsPerSelectField) {
        ctx.addIssue({
          code: "custom",
          path: ["custom_fields", index, "options"],
          message: `A select field has at most ${BLUEPRINT_LIMITS.optionsPerSelectField} options.`,
        });
      }
    });
  });
/** A parsed pipeline import file. */
export type PipelineImport = z.infer<typeof PipelineImportSchema>;

/** Phone numbers: digits with optional leading +, spaces, dots, dashes and parentheses; 3 to 20 digits. */
export const PHONE_PATTERN = /^\+?[0-9 ().-]{3,40}$/;

/**
 * CONTRACT "Pipelines, blueprints, transitions" (metadata validated against the blueprint): the schema of one
 * custom field's value. `text` up to 10,000 characters; `email`, `url` (http/https), `phone` strings;
 * `number` a finite JSON number; `boolean`; `date` as YYYY-MM-DD; `datetime` ISO 8601 with offset;
 * `select` one of the field's options. Messages name the field as `metadata.<key>`.
 */
export function customFieldValueSchema(field: CustomField): z.ZodType {
  const name = `metadata.${field.key}`;
  const must = (expected: string) => `${name} must be ${expected}.`;
  switch (field.type) {
    case "text":
      return z.string({ error: must("text") }).max(LONG_TEXT_MAX, { error: must(`at most ${LONG_TEXT_MAX} characters`) });
    case "email":
      return z.email({ error: must("an email address, e.g. ada@example.com") }).max(NAME_MAX, { error: must(`at most ${NAME_MAX} characters`) });
    case "number":
      return z.number({ error: must("a number (not text), e.g. 1500") });
    case "boolean":
      return z.boolean({ error: must("true or false") });
    case "date":
      return z.iso.date({ error: must("a date as YYYY-MM-DD, e.g. 2026-03-01") });
    case "datetime":
      return dateTimeField(name);
    case "url":
      return z.url({ protocol: /^https?$/, error: must("a full URL starting with https://") }).max(URL_MAX, { error: must(`at most ${URL_MAX} characters`) });
    case "phone":
      return z
        .string({ error: must("a phone number (text)") })
        .regex(PHONE_PATTERN, {
          error: must("a phone number of digits, optionally with +, spaces, dashes or parentheses, e.g. +1 555 010 9999"),
          abort: true,
        })
        .refine((v) => countDigits(v) >= 3 && countDigits(v) <= 20, { error: must("a phone number of 3 to 20 digits") });
    case "select": {
      const options = field.options ?? [];
      return z
        .string({ error: must(`one of: ${options.join(", ")}`) })
        .refine((v) => options.includes(v), { error: must(`one of: ${options.join(", ")}`) });
    }
  }
}

/**
 * CONTRACT "Pipelines, blueprints, transitions": the `metadata` object of an item create ("create": required
 * fields must be present) or update ("update": every field optional) for one blueprint. Unknown keys and wrong
 * value types fail; the server answers those with 422 `invalid_reference`. `null` clears an optional field
 * (it is refused for required fields).
 */
export function metadataSchemaFor(blueprint: Pick<Blueprint, "custom_fields">, mode: "create" | "update") {
  const shape: Record<string, z.ZodType> = {};
  for (const field of blueprint.custom_fields) {
    const value = customFieldValueSchema(field);
    if (field.required && mode === "create") {
      shape[field.key] = z.unknown().superRefine((v, ctx) => {
        if (v === undefined || v === null || v === "") {
          ctx.addIssue({ code: "custom", message: `metadata.${field.key} is required for this pipeline.` });
        }
      }).pipe(value);
    } else if (field.required) {
      shape[field.key] = value.optional();
    } else {
      shape[field.key] = value.nullable().optional();
    }
  }
  const known = blueprint.custom_fields.map((f) => f.key);
  return z.strictObject(shape, {
    error: (iss) => {
      if (iss.code === "unrecognized_keys") {
        const list = known.length > 0 ? `This pipeline's custom fields are: ${known.join(", ")}.` : "This pipeline has no custom fields.";
        return `Unknown custom field ${quoteSome(iss.keys)}. ${list}`;
      }
      if (iss.code === "invalid_type") return 'metadata must be an object of values keyed by field name, e.g. {"email": "ada@example.com"}.';
      return undefined;
    },
  });
}

function findRepeats(values: readonly string[]): string[] {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const v of values) {
    const norm = v.trim().toLowerCase();
    if (seen.has(norm)) repeated.add(v);
    seen.add(norm);
  }
  return [...repeated];
}

function quoteList(values: readonly string[]): string {
  return values.map((v) => JSON.stringify(v)).join(", ");
}

function countDigits(value: string): number {
  return value.replace(/[^0-9]/g, "").length;
}
