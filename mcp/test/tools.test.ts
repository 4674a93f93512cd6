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
    for (const name of ["list_items", "get_item", "check_duplicates", "list_tasks", "get_task", "describe_pipelines", "list_webhooks"]) {
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
    for (const name of ["create_item", "create_task", "subscribe_webhook", "upsert_item"]) {
      expect(byName[name]!.description).toMatch(/idempotency_key/);
      expect(byName[name]!.inputSchema.properties).toHaveProperty("idempotency_key");
    }
    expect(byName.list_items!.inputSchema.properties).toMatchObject({ limit: { default: 20, maximum: 100 }, fields: { type: "array" } });
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
});

describe("which tools a key gets", () => {
  const names = (scopes: readonly Scope[], extra: { readOnly?: boolean; toolsets?: (typeof TOOLSETS)[number][] } = {}) =>
    toolsFor({ scopes, toolsets: [...TOOLSETS], ...extra }).map((t) => t.name);

  it("an items:read key lists no tool whose readOnlyHint is false", () => {
    const tools = toolsFor({ scopes: ["items:read"], toolsets: [...TOOLSETS] });
    expect(tools.map((t) => t.name)).toEqual(["describe_pipelines", "list_items", "get_item", "check_duplicates"]);
    expect(tools.every((t) => t.annotations.readOnlyHint)).toBe(true);
  });

  it("each scope opens its own tools; read-only keeps only reads; toolsets select", () => {
    expect(names(["items:write"])).toEqual(["describe_pipelines", "create_item", "upsert_item", "update_item", "delete_item"]);
    expect(names(["tasks:write"])).toEqual(["describe_pipelines", "create_task", "update_task", "complete_task"]);
    expect(names(["hooks:manage"])).toEqual(["describe_pipelines", "subscribe_webhook", "list_webhooks", "unsubscribe_webhook", "list_webhook_deliveries"]);
    expect(names([...SCOPES], { readOnly: true }).every((n) => TOOLS.find((t) => t.name === n)!.annotations.readOnlyHint)).toBe(true);
    expect(names([...SCOPES], { toolsets: ["pipelines"] })).toEqual(["describe_pipelines"]);
    expect(toolsFor({ scopes: [...SCOPES] }).some((t) => t.toolset === "webhooks")).toBe(false);
  });

  it("parses the options and refuses unknown values", () => {
    expect(parseToolsets("items, tasks")).toEqual(["items", "tasks"]);
    expect(parseToolsets("all")).toEqual([...TOOLSETS]);
    expect(parseToolsets(" ")).toBeUndefined();
    expect(() => parseToolsets("items,secrets")).toThrow(/Unknown toolset "secrets"/);
    expect(parseReadOnly("TRUE")).toBe(true);
    expect(parseReadOnly(undefined)).toBe(false);
    expect(() => parseReadOnly("maybe")).toThrow(/read_only/);
  });
});
