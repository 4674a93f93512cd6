/**
 * Issue 26 part 5: every MCP tool maps to operations of the API (server/src/openapi/operations.ts) whose access its
 * scope satisfies, and every operation has a tool or is listed here as deliberately without one. So a new endpoint
 * without a tool, or a tool without an endpoint, fails this test.
 */
import { TOOLS, toolScopes } from "@stageline/mcp";
import { API_OPERATIONS } from "../src/openapi/operations";

/** Operations no tool calls, and why. */
const WITHOUT_TOOL: Record<string, string> = {
  getOpenApiDocument: "the API description itself, not an action",
  getMe: "the key's identity: the MCP server reads it for the scopes, an agent has no use for it",
  getSampleItem: "a Zapier/n8n trigger-setup sample, not data",
  getSampleTask: "a Zapier/n8n trigger-setup sample, not data",
  rotateWebhookSecret: "a secret rotation is an operator's step, not an agent's",
  redeliverWebhook: "an operator's repair step",
  getSampleNote: "a Zapier/n8n trigger-setup sample, not data",
  getNote: "list_notes (by item_id) gives every note with its body and version; a note id alone comes only from a list",
  replayWebhookDeliveries: "an operator's repair step",
  getEvent: "list_events gives every event with its data; an event id alone comes only from the feed or a delivery's webhook-id",
  batchItems: "a script's bulk transport under the rate limit; an agent makes one write per tool call, each one confirmed on its own",
  batchTasks: "a script's bulk transport under the rate limit; an agent makes one write per tool call, each one confirmed on its own",
};

describe("MCP tools and API operations", () => {
  const byId = new Map(API_OPERATIONS.map((op) => [op.operationId, op]));

  it("each tool calls existing operations that its scope may call", () => {
    for (const tool of TOOLS) {
      expect(tool.operations.length).toBeGreaterThan(0);
      for (const id of tool.operations) {
        const op = byId.get(id);
        if (!op) throw new Error(`${tool.name}: no API operation ${id}`);
        if (tool.scope === "any") expect([tool.name, op.access]).toEqual([tool.name, "any"]);
        else expect([tool.name, op.access]).toEqual([tool.name, expect.arrayContaining([...toolScopes(tool)])]);
      }
    }
  });

  it("the sync operations have their tools, with the operation's scope (CONTRACT \"MCP server\")", () => {
    const toolOf = (id: string) => TOOLS.filter((t) => t.operations.includes(id)).map((t) => [t.name, t.scope]);
    expect(toolOf("deleteItem")).toEqual([["delete_item", "items:write"]]);
    expect(toolOf("upsertItem")).toEqual([["upsert_item", "items:write"]]);
    expect(WITHOUT_TOOL).not.toHaveProperty("deleteItem");
    expect(WITHOUT_TOOL).not.toHaveProperty("upsertItem");
  });

  it("the notes and people operations have their tools, with the operation's scope (CONTRACT \"Notes\", \"People\")", () => {
    const toolOf = (id: string) => TOOLS.filter((t) => t.operations.includes(id)).map((t) => [t.name, t.scope, t.toolset]);
    expect(toolOf("listNotes")).toEqual([["list_notes", "items:read", "notes"]]);
    expect(toolOf("createNote")).toEqual([["add_note", "items:write", "notes"]]);
    expect(toolOf("updateNote")).toEqual([["update_note", "items:write", "note_edits"]]);
    expect(toolOf("deleteNote")).toEqual([["delete_note", "items:write", "note_edits"]]);
    expect(toolOf("listUsers")).toEqual([["list_users", "any", "people"]]);
  });

  it("the events feed has its tool, open to either scope the feed admits (CONTRACT \"Events feed\")", () => {
    const toolOf = (id: string) => TOOLS.filter((t) => t.operations.includes(id)).map((t) => [t.name, t.scope, t.toolset]);
    expect(toolOf("listEvents")).toEqual([["list_events", ["items:read", "tasks:read"], "events"]]);
    expect(byId.get("listEvents")!.access).toEqual(["items:read", "tasks:read"]);
    expect(WITHOUT_TOOL).not.toHaveProperty("listEvents");
  });

  it("each operation has a tool or a reason in WITHOUT_TOOL", () => {
    const covered = new Set(TOOLS.flatMap((t) => t.operations));
    const uncovered = API_OPERATIONS.map((op) => op.operationId).filter((id) => !covered.has(id) && !(id in WITHOUT_TOOL));
    expect(uncovered).toEqual([]);
    for (const id of Object.keys(WITHOUT_TOOL)) expect(byId.has(id) && !covered.has(id)).toBe(true);
  });
});
