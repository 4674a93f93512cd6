import fs from "node:fs";
import path from "node:path";
import {
  BlueprintSchema,
  BUILT_IN_ITEM_FIELDS,
  createProblem,
  DuplicateMatchSchema,
  ERROR_CODES,
  EVENT_NAMES,
  EVENT_PAYLOAD_SCHEMAS,
  ItemCreateSchema,
  ItemListQuerySchema,
  ItemSchema,
  ItemUpdateSchema,
  KeyCreateSchema,
  metadataSchemaFor,
  PipelineImportSchema,
  PROBLEM_STATUS,
  problemTypeUri,
  ProblemSchema,
  SCOPES,
  TaskCreateSchema,
  TaskListQuerySchema,
  TaskUpdateSchema,
  toFieldErrors,
  WebhookSubscribeSchema,
} from "./index";

const sampleItem = {
  item_id: "itm_1",
  short_id: "SALES-42",
  name: "Acme renewal",
  pipeline: "Sales",
  pipeline_id: "pl_1",
  stage: "Lead",
  stage_id: "st_1",
  status: "Open",
  status_id: "ss_1",
  contact_id: null,
  source: "zapier",
  created_at: "2026-03-01T09:30:00.000Z",
  updated_at: "2026-03-01T09:30:00.000Z",
  version: 1,
};

const validCreate = { name: "Acme renewal", pipeline_id: "pl_1", stage_id: "st_1" };

describe("item create body", () => {
  it("accepts the spec's required fields alone", () => {
    expect(ItemCreateSchema.safeParse(validCreate).success).toBe(true);
  });

  it("rejects an unknown top-level field and names it in the field errors", () => {
    const result = ItemCreateSchema.safeParse({ ...validCreate, deal_value: 5 });
    expect(result.success).toBe(false);
    const errors = toFieldErrors(result.error!);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.path).toBe("deal_value");
    expect(errors[0]!.message).toMatch(/Unknown field "deal_value"/);
    expect(errors[0]!.message).toMatch(/metadata/);
  });

  it("lists every missing required field", () => {
    const result = ItemCreateSchema.safeParse({});
    expect(toFieldErrors(result.error!)).toEqual([
      { path: "name", message: "name is required." },
      { path: "pipeline_id", message: "pipeline_id is required." },
      { path: "stage_id", message: "stage_id is required." },
    ]);
  });

  it("rejects a name longer than 255 characters", () => {
    expect(ItemCreateSchema.safeParse({ ...validCreate, name: "x".repeat(256) }).success).toBe(false);
    expect(ItemCreateSchema.safeParse({ ...validCreate, name: "x".repeat(255) }).success).toBe(true);
  });

  it("says so when the body is not a JSON object", () => {
    const result = ItemCreateSchema.safeParse([1, 2]);
    expect(toFieldErrors(result.error!)).toEqual([{ path: "", message: "The request body must be a JSON object." }]);
  });
});

describe("update bodies", () => {
  it("an empty item update is rejected with a request for at least one field", () => {
    const result = ItemUpdateSchema.safeParse({});
    expect(result.success).toBe(false);
    expect(result.error!.issues[0]!.message).toBe("Provide at least one field to change.");
  });

  it("an item update with only a version is accepted", () => {
    expect(ItemUpdateSchema.parse({ version: 3 })).toEqual({ version: 3 });
  });

  it("an item update rejects version 0 and fractional versions", () => {
    expect(ItemUpdateSchema.safeParse({ version: 0 }).success).toBe(false);
    expect(ItemUpdateSchema.safeParse({ version: 1.5 }).success).toBe(false);
  });

  it("an empty task update is rejected, a completion alone is accepted", () => {
    expect(TaskUpdateSchema.safeParse({}).success).toBe(false);
    expect(TaskUpdateSchema.parse({ is_completed: true })).toEqual({ is_completed: true });
  });
});

describe("blueprint", () => {
  it("rejects a custom field key that collides with a built-in item field", () => {
    for (const key of ["status", "version", "matched_on"]) {
      const result = BlueprintSchema.safeParse({ custom_fields: [{ key, label: "X", type: "text" }] });
      expect(result.success).toBe(false);
      expect(toFieldErrors(result.error!)[0]!.path).toBe("custom_fields[0].key");
    }
  });

  it("reserves every built-in item key", () => {
    expect(BUILT_IN_ITEM_FIELDS).toEqual(expect.arrayContaining(Object.keys(ItemSchema.shape)));
  });

  it("accepts an empty blueprint as one without custom fields", () => {
    expect(BlueprintSchema.parse({})).toEqual({ custom_fields: [] });
  });

  it("requires options on a select field", () => {
    expect(BlueprintSchema.safeParse({ custom_fields: [{ key: "tier", label: "Tier", type: "select" }] }).success).toBe(false);
  });

  it("gives import-file stages the Open, Won, Lost statuses by default", () => {
    const parsed = PipelineImportSchema.parse({ name: "Sales", short_id_prefix: "SALES", stages: [{ name: "Lead" }] });
    expect(parsed.stages[0]!.statuses).toEqual(["Open", "Won", "Lost"]);
  });

  it("validates metadata against the blueprint: required on create, types, unknown keys", () => {
    const blueprint = BlueprintSchema.parse({
      custom_fields: [
        { key: "email", label: "Email", type: "email", required: true },
        { key: "deal_value", label: "Deal value", type: "number" },
      ],
    });
    const create = metadataSchemaFor(blueprint, "create");
    expect(create.safeParse({ email: "ada@example.com", deal_value: 1500 }).success).toBe(true);
    const paths = toFieldErrors(create.safeParse({ deal_value: "1500", colour: "red" }).error!).map((e) => e.path);
    expect(paths).toEqual(expect.arrayContaining(["email", "deal_value", "colour"]));
    expect(metadataSchemaFor(blueprint, "update").safeParse({ deal_value: null }).success).toBe(true);
  });
});

describe("list queries", () => {
  it("defaults limit to 100 and coerces the query string", () => {
    expect(ItemListQuerySchema.parse({}).limit).toBe(100);
    expect(ItemListQuerySchema.parse({ limit: "500" }).limit).toBe(500);
    expect(ItemListQuerySchema.parse({ limit: "1" }).limit).toBe(1);
  });

  it("rejects a limit outside 1..500 or not a whole number", () => {
    for (const limit of ["0", "501", "abc", "2.5"]) {
      const result = ItemListQuerySchema.safeParse({ limit });
      expect(result.success).toBe(false);
      expect(toFieldErrors(result.error!)).toEqual([{ path: "limit", message: "limit must be a whole number from 1 to 500." }]);
    }
  });

  it("treats an empty filter as absent and requires a time zone on created_after", () => {
    expect(ItemListQuerySchema.parse({ pipeline_id: "" }).pipeline_id).toBeUndefined();
    expect(ItemListQuerySchema.safeParse({ created_after: "2026-03-01T09:30:00" }).success).toBe(false);
    expect(ItemListQuerySchema.safeParse({ created_after: "2026-03-01T09:30:00+01:00" }).success).toBe(true);
  });

  it("items filters: short_id, name and q are trimmed (blank = absent), q is 2..100 characters, updated_after needs a zone", () => {
    const parsed = ItemListQuerySchema.parse({ short_id: " sales-4 ", name: "  Acme Deal ", q: " acm ", updated_after: "2026-03-01T09:30:00Z" });
    expect(parsed).toMatchObject({ short_id: "sales-4", name: "Acme Deal", q: "acm", updated_after: "2026-03-01T09:30:00Z" });
    expect(ItemListQuerySchema.parse({ name: "   ", q: "" })).toMatchObject({ name: undefined, q: undefined });
    for (const q of ["a", " b ", "x".repeat(101)]) {
      const result = ItemListQuerySchema.safeParse({ q });
      expect(result.success).toBe(false);
      expect(toFieldErrors(result.error!)[0]!.path).toBe("q");
    }
    expect(ItemListQuerySchema.safeParse({ q: ["ab", "cd"] }).success).toBe(false);
    expect(ItemListQuerySchema.safeParse({ updated_after: "2026-03-01T09:30:00" }).success).toBe(false);
  });

  it("reads is_completed=false on the task list as a boolean", () => {
    expect(TaskListQuerySchema.parse({ is_completed: "false" }).is_completed).toBe(false);
    expect(TaskListQuerySchema.safeParse({ is_completed: "no" }).success).toBe(false);
  });
});

describe("responses", () => {
  it("an item with custom fields parses and keeps them", () => {
    const item = ItemSchema.parse({ ...sampleItem, email: "ada@example.com", deal_value: 1500 });
    expect(item.email).toBe("ada@example.com");
    expect(item.deal_value).toBe(1500);
  });

  it("a duplicate match is an item plus matched_on", () => {
    const match = DuplicateMatchSchema.parse({ ...sampleItem, email: "ada@example.com", matched_on: ["email"] });
    expect(match.matched_on).toEqual(["email"]);
    expect(match.email).toBe("ada@example.com");
  });

  it("every event has a payload schema", () => {
    expect(Object.keys(EVENT_PAYLOAD_SCHEMAS).sort()).toEqual([...EVENT_NAMES].sort());
  });
});

describe("tasks", () => {
  it("a task create needs title, due_at with a time zone, and assigned_to", () => {
    expect(TaskCreateSchema.safeParse({ title: "Call", due_at: "2026-03-01T09:30:00Z", assigned_to: "u1" }).success).toBe(true);
    expect(TaskCreateSchema.safeParse({ title: "Call", due_at: "2026-03-01", assigned_to: "u1" }).success).toBe(false);
  });

  it("a task create rejects an unknown priority and negative minutes", () => {
    const result = TaskCreateSchema.safeParse({
      title: "Call",
      due_at: "2026-03-01T09:30:00Z",
      assigned_to: "u1",
      priority: "critical",
      duration_minutes: -5,
    });
    expect(toFieldErrors(result.error!).map((e) => e.path)).toEqual(["priority", "duration_minutes"]);
  });
});

describe("webhooks and keys", () => {
  it("a subscribe body takes any event name (the server answers unknown ones with 422)", () => {
    expect(WebhookSubscribeSchema.safeParse({ target_url: "https://hooks.zapier.com/h/1", event: "item.deleted" }).success).toBe(true);
    expect(WebhookSubscribeSchema.safeParse({ target_url: "ftp://example.com", event: "item.created" }).success).toBe(false);
  });

  it("a new key gets every scope by default", () => {
    expect(KeyCreateSchema.parse({ company_id: "c1", name: "Zapier" }).scopes).toEqual([...SCOPES]);
  });
});

describe("problems", () => {
  it("every code builds a valid problem with its status and type URI", () => {
    for (const code of ERROR_CODES) {
      const problem = createProblem(code, "detail");
      expect(ProblemSchema.parse(problem).status).toBe(PROBLEM_STATUS[code]);
    }
    expect(problemTypeUri("version_conflict")).toBe("https://docs.stageline.dev/problems/version-conflict");
    expect(createProblem("version_conflict", "Item changed", { current_version: 4 }).current_version).toBe(4);
  });
});

describe("the example pipeline file in docs/examples", () => {
  it("is a valid pipeline import (docs/operations.md shows it with `pipelines import --file`)", () => {
    const file = JSON.parse(fs.readFileSync(path.join(__dirname, "../../docs/examples/recruiting-pipeline.json"), "utf8"));
    const result = PipelineImportSchema.safeParse(file);
    expect(result.success ? [] : toFieldErrors(result.error)).toEqual([]);
  });
});
