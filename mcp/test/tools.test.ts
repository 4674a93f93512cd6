/**
 * Issue 26 part 2-4: the tool definitions as a client lists them (CONTRACT "MCP server"): title, a description,
 * all four annotations, input and output schemas; which tools a key's scopes and the options leave; the token
 * budget of tools/list (o200k, gpt-tokenizer); and a snapshot that fails when a definition changes without it
 * (`npx jest mcp/test/tools.test.ts -u` after a deliberate change).
 */
import { encode } from "gpt-tokenizer/cjs/encoding/o200k_base";
import { SCOPES, type Scope } from "@stageline/shared";
import { TOOLS, TOOLSETS, parseReadOnly, parseToolsets, toolsFor } from "../src";
import { listedTools } from "./in-memory";

/** CONTRACT "MCP server", "Token economy". */
const TOOLS_LIST_TOKEN_BUDGET = 6_000;

describe("tools/list", () => {
  it("gives every tool a title, a description, all four annotations and object input/output schemas", async () => {
    const { tools } = await listedTools({ toolsets: [...TOOLSETS] });
    expect(tools.map((t) => t.name)).toEqual(TOOLS.map((t) => t.name));
    for (const tool of tools) {
      expect(tool.name).toMatch(/^[a-z]+(_[a-z]+)+$/);
      expect(tool.title).toEqual(expect.any(String));
      expect(tool.description!.length).toBeGreaterThan(30);
      for (const hint of ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] as const) {
        expect(typeof tool.annotations?.[hint]).toBe("boolean");
      }
      expect(tool.inputSchema.type).toBe("object");
      expect(tool.outputSchema?.type).toBe("object");
      // Compact schemas: no zod date-time regex, no $schema.
      expect(JSON.stringify(tool)).not.toMatch(/\$schema|\(\?:\(\?:\\\\d\\\\d\[2468\]/);
    }
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    for (const name of ["list_items", "get_item", "check_duplicates", "list_tasks", "get_task", "describe_pipelines", "list_webhooks", "list_notes", "list_users", "list_events"]) {
      expect(byName[name]!.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true });
    }
    expect(byName.update_item!.annotations).toMatchObject({ readOnlyHint: false, idempotentHint: true });
    expect(byName.create_item!.annotations).toMatchObject({ readOnlyHint: false, idempotentHint: false });
    // The sync tools (CONTRACT "Item deletion and erasure", "Upsert"); delete_item's idempotentHint is argued in items.ts.
    expect(byName.delete_item!.annotations).toEqual({ title: "Delete an item", readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false });
    expect(byName.delete_item!.description).toMatch(/erasing its data \(GDPR erasure\); no undo.*confirmed with them first/);
    expect(byName.delete_item!.inputSchema).toMatchObject({ required: ["item_id"], properties: { item_id: { type: "string" }, version: { type: "integer", minimum: 1 } } });
    expect(byName.delete_item!.outputSchema).toMatchObject({ required: ["item_id", "deleted"], properties: { deleted: { const: true } } });
    expect(byName.upsert_item!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true });
    expect(byName.upsert_item!.description).toMatch(/ambiguous_match.*upsert_unavailable/);
    expect(byName.upsert_item!.outputSchema).toMatchObject({ required: ["result", "item"], properties: { result: { enum: ["created", "updated", "unchanged"] } } });
    // Notes and people (CONTRACT "Notes", "People"; issue 30): update_note and delete_note are the note_edits toolset's.
    expect(byName.add_note!.annotations).toEqual({ title: "Add a note", readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false });
    expect(byName.add_note!.inputSchema).toMatchObject({ required: ["item_id", "body"], properties: { body: { maxLength: 65536 }, pinned: { type: "boolean" } } });
    expect(byName.add_note!.outputSchema).toMatchObject({ required: expect.arrayContaining(["note_id", "item_id", "body", "pinned", "version"]) });
    expect(byName.list_notes!.inputSchema.properties).toMatchObject({ item_id: { type: "string" }, pinned: { type: "boolean" }, updated_after: { format: "date-time" }, limit: { default: 20 } });
    expect(byName.list_notes!.outputSchema).toMatchObject({ required: ["notes", "next_cursor"] });
    expect(byName.list_users!.outputSchema).toMatchObject({ properties: { users: { items: { required: ["user_id", "name", "email"] } } } });
    expect(byName.list_users!.description).toMatch(/assigned_to.*user_id/);
    for (const name of ["update_note", "delete_note"]) {
      expect(byName[name]!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false });
      expect(byName[name]!.inputSchema).toMatchObject({ required: ["note_id"], properties: { version: { type: "integer", minimum: 1 } } });
    }
    expect(byName.delete_note!.description).toMatch(/erasing its body; no undo.*confirmed with them first/);
    expect(byName.delete_note!.outputSchema).toMatchObject({ required: ["note_id", "deleted"], properties: { deleted: { const: true } } });
    for (const name of ["create_item", "create_task", "subscribe_webhook", "upsert_item", "add_note"]) {
      expect(byName[name]!.description).toMatch(/idempotency_key/);
      expect(byName[name]!.inputSchema.properties).toHaveProperty("idempotency_key");
    }
    expect(byName.list_items!.inputSchema.properties).toMatchObject({ limit: { default: 20, maximum: 100 }, fields: { type: "array" } });
    // The events feed (CONTRACT "Events feed"): "what changed since", read-only, the feed's filters and after.
    expect(byName.list_events!.annotations).toEqual({ title: "List events", readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
    expect(byName.list_events!.description).toMatch(/What changed.*after=<event_id>.*oldest first.*after=next_cursor/);
    expect(byName.list_events!.inputSchema).toMatchObject({
      additionalProperties: false,
      properties: {
        event: { type: "array", items: { enum: expect.arrayContaining(["item.created", "task.completed", "note.deleted"]) } },
        resource_id: { type: "string" },
        pipeline_id: { type: "string" },
        after: { type: "string" },
        limit: { default: 20, maximum: 100 },
        cursor: { type: "string" },
      },
    });
    expect(byName.list_events!.inputSchema).not.toHaveProperty("required");
    expect(byName.list_events!.outputSchema).toMatchObject({
      required: ["events", "next_cursor"],
      properties: { events: { items: { required: ["event_id", "event", "occurred_at", "resource_id", "data"], properties: { event: { type: "string" }, data: { type: "object" } } } } },
    });
    // An output enum of event names would refuse a new name, which is an additive change (CONTRACT "Versioning").
    expect(JSON.stringify(byName.list_events!.outputSchema)).not.toContain("item.created");
  });

  it("matches the committed snapshot (a changed tool definition must update it)", async () => {
    expect(await listedTools({ toolsets: [...TOOLSETS] })).toMatchSnapshot();
  });

  it(`fits the default toolsets in ${TOOLS_LIST_TOKEN_BUDGET} o200k tokens`, async () => {
    const tokens = encode(JSON.stringify(await listedTools())).length;
    const all = encode(JSON.stringify(await listedTools({ toolsets: [...TOOLSETS] }))).length;
    console.log(`tools/list tokens (o200k): default toolsets ${tokens}, all toolsets ${all}`);
    expect(tokens).toBeLessThanOrEqual(TOOLS_LIST_TOKEN_BUDGET);
  });

  it("serves add_note, list_notes, list_users and list_events by default, update_note and delete_note only with note_edits", async () => {
    const names = (await listedTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["add_note", "list_notes", "list_users", "list_events"]));
    expect(names).not.toContain("update_note");
    expect(names).not.toContain("delete_note");
    const edits = (await listedTools({ toolsets: ["note_edits"] })).tools.map((t) => t.name);
    expect(edits).toEqual(["update_note", "delete_note"]);
  });

  it("keeps what a model needs in the compact schemas: argument formats and bounds; results open to new fields", async () => {
    const { tools } = await listedTools({ toolsets: [...TOOLSETS] });
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(byName.create_task!.inputSchema.properties).toMatchObject({ due_at: { format: "date-time" }, title: { minLength: 1, maxLength: 255 } });
    expect(byName.create_task!.inputSchema.additionalProperties).toBe(false); // unknown arguments are refused
    expect(byName.get_task!.inputSchema.properties!.task_id).toEqual({ type: "string" }); // copied from results
    expect(byName.get_task!.outputSchema).not.toHaveProperty("additionalProperties"); // CONTRACT "Versioning"
    expect(byName.get_task!.outputSchema!.properties).toMatchObject({ assignee: { type: ["object", "null"] }, duration_minutes: { type: ["integer", "null"] } });
    expect(JSON.stringify(tools)).not.toMatch(/9007199254740991|"additionalProperties":\{\}/);
  });
});

describe("which tools a key gets", () => {
  const names = (scopes: readonly Scope[], extra: { readOnly?: boolean; toolsets?: (typeof TOOLSETS)[number][] } = {}) =>
    toolsFor({ scopes, toolsets: [...TOOLSETS], ...extra }).map((t) => t.name);

  it("an items:read key lists no tool whose readOnlyHint is false", () => {
    const tools = toolsFor({ scopes: ["items:read"], toolsets: [...TOOLSETS] });
    expect(tools.map((t) => t.name)).toEqual(["describe_pipelines", "list_items", "get_item", "check_duplicates", "list_users", "list_events", "list_notes"]);
    expect(tools.every((t) => t.annotations.readOnlyHint)).toBe(true);
  });

  it("list_events is there for a key with items:read or tasks:read (the feed shows each what it reads), for no other", () => {
    expect(names(["tasks:read"])).toEqual(["describe_pipelines", "list_tasks", "get_task", "list_users", "list_events"]);
    expect(names(["items:read"])).toContain("list_events");
    expect(toolsFor({ scopes: ["tasks:read"] }).map((t) => t.name)).toContain("list_events"); // default toolsets
    expect(toolsFor({ scopes: ["tasks:read"], readOnly: true }).map((t) => t.name)).toContain("list_events");
    for (const scope of SCOPES.filter((s) => s !== "items:read" && s !== "tasks:read")) expect(names([scope])).not.toContain("list_events");
    expect(names([...SCOPES], { toolsets: ["events"] })).toEqual(["list_events"]);
  });

  it("each scope opens its own tools; read-only keeps only reads; toolsets select", () => {
    expect(names(["items:write"])).toEqual(["describe_pipelines", "create_item", "upsert_item", "update_item", "delete_item", "list_users", "add_note", "update_note", "delete_note"]);
    expect(names(["tasks:write"])).toEqual(["describe_pipelines", "create_task", "update_task", "complete_task", "list_users"]);
    expect(names(["hooks:manage"])).toEqual(["describe_pipelines", "list_users", "subscribe_webhook", "list_webhooks", "unsubscribe_webhook", "list_webhook_deliveries"]);
    expect(names([...SCOPES], { readOnly: true }).every((n) => TOOLS.find((t) => t.name === n)!.annotations.readOnlyHint)).toBe(true);
    expect(names([...SCOPES], { toolsets: ["pipelines"] })).toEqual(["describe_pipelines"]);
    expect(names([...SCOPES], { toolsets: ["notes", "people"] })).toEqual(["list_users", "list_notes", "add_note"]);
    expect(names(["hooks:manage"], { toolsets: ["events"] })).toEqual([]);
    expect(toolsFor({ scopes: [...SCOPES] }).some((t) => t.toolset === "webhooks" || t.toolset === "note_edits")).toBe(false);
  });

  it("parses the options and refuses unknown values", () => {
    expect(parseToolsets("items, tasks")).toEqual(["items", "tasks"]);
    expect(parseToolsets("events")).toEqual(["events"]);
    expect(parseToolsets("all")).toEqual([...TOOLSETS]);
    expect(parseToolsets(" ")).toBeUndefined();
    expect(() => parseToolsets("items,secrets")).toThrow(/Unknown toolset "secrets"/);
    expect(parseReadOnly("TRUE")).toBe(true);
    expect(parseReadOnly(undefined)).toBe(false);
    expect(() => parseReadOnly("maybe")).toThrow(/read_only/);
  });
});
