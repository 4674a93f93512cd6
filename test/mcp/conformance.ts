/**
 * What every transport of the Stageline MCP tools must do (CONTRACT "MCP server"), checked with the SDK's own client
 * (`@modelcontextprotocol/client`) against a real server: the tools a key's scopes and options list, every tool
 * called with its structuredContent validated by ajv against the tool's outputSchema, a repeated create_item or
 * upsert_item with one idempotency_key making one item, delete_item's erasure (CONTRACT "Item deletion and erasure")
 * and the upsert's outcomes (CONTRACT "Upsert"), the notes and people tools (CONTRACT "Notes", "People"), errors as
 * `isError` results carrying the problem's code.
 * http.test.ts runs it over Streamable HTTP, stdio.test.ts over the spawned stageline-mcp bin.
 */
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import type { Client } from "@modelcontextprotocol/client";
import type { Scope } from "@stageline/shared";
import type { TestServer } from "../../server/test/helpers/test-server";

/** The default toolsets' tools (items, tasks, pipelines, notes, people, events), in tools/list order. */
export const DEFAULT_TOOL_NAMES = [
  "describe_pipelines",
  "list_items",
  "get_item",
  "check_duplicates",
  "create_item",
  "upsert_item",
  "update_item",
  "delete_item",
  "list_tasks",
  "get_task",
  "create_task",
  "update_task",
  "complete_task",
  "list_users",
  "list_events",
  "list_notes",
  "add_note",
];
/** The note_edits toolset's tools (off by default, mcp/src/tools/notes.ts says why). */
export const NOTE_EDIT_TOOL_NAMES = ["update_note", "delete_note"];
/** The webhooks toolset's tools. */
export const WEBHOOK_TOOL_NAMES = ["subscribe_webhook", "list_webhooks", "unsubscribe_webhook", "list_webhook_deliveries"];

/** Opens a client for `apiKey` with options (`readOnly`, `toolsets`) as the transport passes them. */
export type Connect = (apiKey: string, options?: { readOnly?: boolean; toolsets?: string }) => Promise<Client>;

type ToolResult = { isError?: boolean; structuredContent?: Record<string, any>; content: { type: string; text?: string }[] };

/** Calls `name` and returns the result (isError results included). */
export async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolResult> {
  return (await client.callTool({ name, arguments: args })) as ToolResult;
}

/** The problem of an `isError` result. */
export function problemOf(result: ToolResult): { code: string; detail: string; [k: string]: unknown } {
  expect(result.isError).toBe(true);
  return JSON.parse(result.content[0]!.text!);
}

/** Registers the shared suite; `env()` gives the running server and a connect function (set up in beforeAll). */
export function conformanceSuite(env: () => { t: TestServer; connect: Connect }): void {
  const clients: Client[] = [];
  const open: Connect = async (key, options) => {
    const client = await env().connect(key, options);
    clients.push(client);
    return client;
  };
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
  });

  const keyWith = async (scopes: Scope[]) => (await env().t.newKey(scopes)).key;

  it("lists the default toolsets for an all-scope key, and the webhooks toolset only when asked", async () => {
    const { t } = env();
    const names = (await (await open(t.apiKey)).listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(DEFAULT_TOOL_NAMES);
    const all = (await (await open(t.apiKey, { toolsets: "all" })).listTools()).tools.map((tool) => tool.name);
    expect(all).toEqual([...DEFAULT_TOOL_NAMES, ...NOTE_EDIT_TOOL_NAMES, ...WEBHOOK_TOOL_NAMES]);
  });

  it("lists no write tool for an items:read key, and only reads under read-only", async () => {
    const { t } = env();
    const readKey = await keyWith(["items:read"]);
    const tools = (await (await open(readKey, { toolsets: "all" })).listTools()).tools;
    expect(tools.map((tool) => tool.name)).toEqual(["describe_pipelines", "list_items", "get_item", "check_duplicates", "list_users", "list_events", "list_notes"]);
    expect(tools.filter((tool) => tool.annotations?.readOnlyHint !== true)).toEqual([]);
    const readOnly = (await (await open(t.apiKey, { readOnly: true, toolsets: "all" })).listTools()).tools;
    expect(readOnly.map((tool) => tool.name)).toEqual([
      "describe_pipelines",
      "list_items",
      "get_item",
      "check_duplicates",
      "list_tasks",
      "get_task",
      "list_users",
      "list_events",
      "list_notes",
      "list_webhooks",
      "list_webhook_deliveries",
    ]);
    // A tool the key may not use is not there to call: nothing is created, upserted or deleted.
    const client = await open(readKey);
    const item = await t.request("POST", "/v1/ext/items", { name: "Kept", pipeline_id: t.pipeline.id, stage_id: t.pipeline.stages[0]!.id, metadata: { email: "kept@example.com" } });
    const body = { name: "x", pipeline_id: t.pipeline.id, stage_id: t.pipeline.stages[0]!.id, metadata: { email: "kept@example.com" } };
    const writes = [
      ["create_item", body],
      ["upsert_item", body],
      ["delete_item", { item_id: item.body.item_id }],
      ["add_note", { item_id: item.body.item_id, body: "not allowed" }],
    ] as const;
    for (const [name, args] of writes) {
      const refused = await client.callTool({ name, arguments: args }).catch((e: Error) => e);
      expect(refused instanceof Error ? refused.message : JSON.stringify(refused)).toMatch(new RegExp(name));
    }
    expect((await t.request("GET", `/v1/ext/items/${item.body.item_id}`)).body).toMatchObject({ name: "Kept", version: 1 });
    expect((await t.request("GET", `/v1/ext/notes?item_id=${item.body.item_id}`)).body).toEqual([]);
  });

  it("calls every tool; each structuredContent validates against the tool's outputSchema", async () => {
    const { t } = env();
    const client = await open(t.apiKey, { toolsets: "all" });
    const tools = (await client.listTools()).tools;
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    const checked = new Set<string>();
    const run = async (name: string, args: Record<string, unknown> = {}) => {
      const result = await call(client, name, args);
      if (result.isError) throw new Error(`${name} failed: ${result.content[0]?.text}`);
      const tool = tools.find((x) => x.name === name)!;
      const validate = ajv.compile(tool.outputSchema!);
      if (!validate(result.structuredContent)) throw new Error(`${name}: ${ajv.errorsText(validate.errors)}`);
      expect(result.content).toEqual([{ type: "text", text: expect.stringMatching(/^[^\n]+$/) }]);
      checked.add(name);
      return result.structuredContent as Record<string, any>;
    };
    const pipelines = (await run("describe_pipelines")).pipelines;
    const sales = pipelines.find((p: { id: string }) => p.id === t.pipeline.id);
    expect(sales.stages.map((s: { name: string }) => s.name)).toEqual(["Lead", "Qualified", "Proposal", "Closed"]);
    expect(sales.stages[0].statuses.map((s: { name: string }) => s.name)).toEqual(["Open", "Won", "Lost"]);
    expect(sales.fields.map((f: { key: string }) => f.key)).toEqual(["email", "deal_value"]);
    const [lead, qualified] = sales.stages;
    const created = await run("create_item", {
      name: "Conformance deal",
      pipeline_id: sales.id,
      stage_id: lead.id,
      metadata: { email: "conf@example.com", deal_value: 10 },
      idempotency_key: `conf-${Date.now()}`,
    });
    expect(created).toMatchObject({ name: "Conformance deal", stage: "Lead", version: 1, email: "conf@example.com" });
    expect((await run("get_item", { item_id: created.item_id })).item_id).toBe(created.item_id);
    const updated = await run("update_item", { item_id: created.item_id, stage_id: qualified.id, version: 1 });
    expect(updated).toMatchObject({ stage: "Qualified", version: 2 });
    // What changed (CONTRACT "Events feed"): newest first, data being the item as the event saw it.
    const changes = (await run("list_events", { resource_id: created.item_id })).events as { event: string; data: { stage: string } }[];
    expect(changes.at(-1)).toMatchObject({ event: "item.created", resource_id: created.item_id, data: { item_id: created.item_id, stage: "Lead" } });
    expect(changes[0]!.data).toMatchObject({ item_id: created.item_id, stage: "Qualified", version: 2 });
    const listed = await run("list_items", { name: "Conformance deal", fields: ["name", "stage"] });
    expect(listed).toEqual({ items: [{ item_id: created.item_id, name: "Conformance deal", stage: "Qualified" }], next_cursor: null });
    const dupes = await run("check_duplicates", { pipeline_id: sales.id, metadata: { email: "conf@example.com" } });
    expect(dupes.items[0]).toMatchObject({ item_id: created.item_id, matched_on: ["email"] });
    const task = await run("create_task", { title: "Call back", due_at: "2026-12-01T09:00:00Z", assigned_to: "ada", item_id: created.item_id });
    expect((await run("get_task", { task_id: task.task_id })).title).toBe("Call back");
    expect((await run("update_task", { task_id: task.task_id, priority: "high" })).priority).toBe("high");
    expect((await run("complete_task", { task_id: task.task_id })).is_completed).toBe(true);
    expect((await run("list_tasks", { item_id: created.item_id, is_completed: true })).tasks.map((x: { task_id: string }) => x.task_id)).toEqual([task.task_id]);
    // Notes (CONTRACT "Notes") and people (CONTRACT "People").
    const users = (await run("list_users")).users as { user_id: string }[];
    expect(users.length).toBeLessThanOrEqual(20);
    const note = await run("add_note", { item_id: created.item_id, body: "Called: **wants a demo**", pinned: true, idempotency_key: `note-${Date.now()}` });
    expect(note).toMatchObject({ item_id: created.item_id, body: "Called: **wants a demo**", pinned: true, version: 1 });
    const notes = await run("list_notes", { item_id: created.item_id, pinned: true, fields: ["pinned"] });
    expect(notes).toEqual({ notes: [{ note_id: note.note_id, pinned: true }], next_cursor: null });
    expect(await run("update_note", { note_id: note.note_id, body: "Called twice", version: 1 })).toMatchObject({ note_id: note.note_id, body: "Called twice", version: 2 });
    expect(await run("delete_note", { note_id: note.note_id, version: 2 })).toEqual({ note_id: note.note_id, deleted: true });
    // The pipeline matches on email: the upsert finds the item and renames it.
    const upserted = await run("upsert_item", { name: "Conformance deal (synced)", pipeline_id: sales.id, stage_id: qualified.id, metadata: { email: "conf@example.com" } });
    expect(upserted).toMatchObject({ result: "updated", item: { item_id: created.item_id, name: "Conformance deal (synced)", stage: "Qualified", version: 3 } });
    expect(await run("delete_item", { item_id: created.item_id, version: 3 })).toEqual({ item_id: created.item_id, deleted: true });
    expect((await run("get_task", { task_id: task.task_id })).item_id).toBeNull(); // the task stays, unlinked
    const hook = await run("subscribe_webhook", { target_url: "https://hooks.example.com/mcp", event: "item.created" });
    expect(hook.secret).toMatch(/^whsec_/);
    expect((await run("list_webhooks")).webhooks.map((w: { id: string }) => w.id)).toContain(hook.id);
    expect((await run("list_webhook_deliveries", { webhook_id: hook.id })).deliveries).toEqual([]);
    expect(await run("unsubscribe_webhook", { webhook_id: hook.id })).toEqual({ webhook_id: hook.id, unsubscribed: true });
    expect([...checked].sort()).toEqual(tools.map((x) => x.name).sort());
  });

  it("a repeated create_item with one idempotency_key makes one item", async () => {
    const { t } = env();
    const client = await open(t.apiKey);
    const args = { name: `Idem ${Date.now()}`, pipeline_id: t.pipeline.id, stage_id: t.pipeline.stages[0]!.id, idempotency_key: `idem-${Date.now()}` };
    const first = await call(client, "create_item", args);
    const second = await call(client, "create_item", args);
    expect(first.isError).toBeFalsy();
    expect(second.structuredContent).toEqual(first.structuredContent);
    const listed = await call(client, "list_items", { name: args.name });
    expect((listed.structuredContent!.items as unknown[]).length).toBe(1);
    // The same key with other arguments is refused, not a second item.
    expect(problemOf(await call(client, "create_item", { ...args, name: `${args.name} changed` })).code).toBe("idempotency_key_reused");
  });

  it("a repeated upsert_item with one idempotency_key makes one item; it then updates or leaves the match", async () => {
    const { t } = env();
    const client = await open(t.apiKey);
    const stamp = `${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
    const place = { pipeline_id: t.pipeline.id, stage_id: t.pipeline.stages[0]!.id };
    const args = { name: `Sync ${stamp}`, ...place, metadata: { email: `sync-${stamp}@example.com` }, idempotency_key: `upsert-${stamp}` };
    const first = await call(client, "upsert_item", args);
    expect(first.isError).toBeFalsy();
    expect(first.structuredContent).toMatchObject({ result: "created", item: { name: args.name, version: 1, email: args.metadata.email } });
    expect(first.content[0]!.text).toMatch(/^Created item /);
    const second = await call(client, "upsert_item", args);
    expect(second.structuredContent).toEqual(first.structuredContent); // the first answer, replayed
    const itemId = first.structuredContent!.item.item_id;
    const listed = await call(client, "list_items", { name: args.name, fields: ["name"] });
    expect(listed.structuredContent!.items).toEqual([{ item_id: itemId, name: args.name }]);
    // The same key with other arguments is refused, not applied.
    expect(problemOf(await call(client, "upsert_item", { ...args, name: `${args.name} changed` })).code).toBe("idempotency_key_reused");
    // Without the key: the match is found; the same values leave it, another name updates it.
    const { idempotency_key: _key, ...plain } = args;
    expect((await call(client, "upsert_item", plain)).structuredContent).toMatchObject({ result: "unchanged", item: { item_id: itemId, version: 1 } });
    const renamed = await call(client, "upsert_item", { ...plain, name: `${args.name} renamed` });
    expect(renamed.structuredContent).toMatchObject({ result: "updated", item: { item_id: itemId, name: `${args.name} renamed`, version: 2 } });
    expect(renamed.content[0]!.text).toMatch(/^Updated item /);
    // A key used over REST means the same to the tool: its stored answer (and Stageline-Upsert) comes back.
    const restBody = { name: `Rest ${stamp}`, ...place, metadata: { email: `rest-${stamp}@example.com` } };
    const rest = await t.request("POST", "/v1/ext/items/upsert", restBody, undefined, { "Idempotency-Key": `rest-${stamp}` });
    expect(rest.status).toBe(201);
    const viaTool = await call(client, "upsert_item", { ...restBody, idempotency_key: `rest-${stamp}` });
    expect(viaTool.structuredContent).toEqual({ result: "created", item: rest.body });
  });

  it("upsert_item errors: ambiguous_match carries matches (replayed alike), upsert_unavailable without the rule's fields", async () => {
    const { t } = env();
    const client = await open(t.apiKey);
    const stamp = `${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
    const place = { pipeline_id: t.pipeline.id, stage_id: t.pipeline.stages[0]!.id };
    const email = `twice-${stamp}@example.com`;
    const twins: string[] = [];
    for (const name of ["Twin A", "Twin B"]) twins.push((await call(client, "create_item", { name: `${name} ${stamp}`, ...place, metadata: { email } })).structuredContent!.item_id);
    const args = { name: `Twin ${stamp}`, ...place, metadata: { email }, idempotency_key: `ambiguous-${stamp}` };
    const ambiguous = problemOf(await call(client, "upsert_item", args));
    expect(ambiguous.code).toBe("ambiguous_match");
    expect([...(ambiguous.matches as string[])].sort()).toEqual([...twins].sort());
    // The stored 409, with its matches; each answer names its own request (CONTRACT "Request ids and the request log").
    const { request_id: _first, ...firstAnswer } = ambiguous;
    const { request_id: _again, ...replayed } = problemOf(await call(client, "upsert_item", args));
    expect(replayed).toEqual(firstAnswer);
    const listed = await call(client, "list_items", { name: args.name });
    expect(listed.structuredContent!.items).toEqual([]); // nothing was created
    const unavailable = problemOf(await call(client, "upsert_item", { name: `No email ${stamp}`, ...place }));
    expect(unavailable.code).toBe("upsert_unavailable");
    expect(unavailable.detail).toMatch(/email/);
  });

  it("delete_item deletes for good: a stale version is refused, then the item is not_found everywhere and its stored answers are erased", async () => {
    const { t } = env();
    const client = await open(t.apiKey);
    const stamp = `${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
    const email = `doomed-${stamp}@example.com`;
    const args = { name: `Doomed ${stamp}`, pipeline_id: t.pipeline.id, stage_id: t.pipeline.stages[0]!.id, metadata: { email }, idempotency_key: `doomed-${stamp}` };
    const itemId = (await call(client, "upsert_item", args)).structuredContent!.item.item_id as string;
    expect(problemOf(await call(client, "delete_item", { item_id: itemId, version: 2 }))).toMatchObject({ code: "version_conflict", current_version: 1 });
    const deleted = await call(client, "delete_item", { item_id: itemId, version: 1 });
    expect(deleted.structuredContent).toEqual({ item_id: itemId, deleted: true });
    expect(deleted.content).toEqual([{ type: "text", text: `Deleted item ${itemId}; its data is erased.` }]);
    expect(problemOf(await call(client, "get_item", { item_id: itemId })).code).toBe("not_found");
    expect((await t.request("GET", `/v1/ext/items/${itemId}`)).status).toBe(404);
    // A repeat changes nothing more: not_found.
    expect(problemOf(await call(client, "delete_item", { item_id: itemId })).code).toBe("not_found");
    // The upsert's stored answer held the item's values: its key now replays payload_erased, never the data.
    const replay = problemOf(await call(client, "upsert_item", args));
    expect(replay.code).toBe("payload_erased");
    expect(JSON.stringify(replay)).not.toContain(email);
    // Another company's item is not_found, and stays.
    const other = await t.newCompany(`Other ${stamp}`);
    const theirs = await t.request("POST", "/v1/ext/items", { name: "Theirs", pipeline_id: other.pipeline.id, stage_id: other.pipeline.stages[0]!.id }, other.apiKey);
    expect(problemOf(await call(client, "delete_item", { item_id: theirs.body.item_id })).code).toBe("not_found");
    expect((await t.request("GET", `/v1/ext/items/${theirs.body.item_id}`, undefined, other.apiKey)).status).toBe(200);
  });

  it("notes: add_note makes one note per idempotency_key; another company's item or note is refused; delete_note erases for good", async () => {
    const { t } = env();
    const client = await open(t.apiKey, { toolsets: "notes,note_edits" });
    const stamp = `${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
    const item = await t.request("POST", "/v1/ext/items", { name: `Noted ${stamp}`, pipeline_id: t.pipeline.id, stage_id: t.pipeline.stages[0]!.id });
    const args = { item_id: item.body.item_id, body: `Secret plan ${stamp}`, idempotency_key: `note-${stamp}` };
    const first = await call(client, "add_note", args);
    expect(first.isError).toBeFalsy();
    expect(first.content[0]!.text).toMatch(/^Added note /);
    expect((await call(client, "add_note", args)).structuredContent).toEqual(first.structuredContent); // replayed
    expect(problemOf(await call(client, "add_note", { ...args, body: "other" })).code).toBe("idempotency_key_reused");
    const noteId = first.structuredContent!.note_id as string;
    expect((await call(client, "list_notes", { item_id: item.body.item_id })).structuredContent!.notes).toHaveLength(1);
    // Bounds: an empty or blank body, an unknown argument.
    expect((await call(client, "add_note", { item_id: item.body.item_id, body: "   " })).isError).toBe(true);
    expect((await call(client, "add_note", { item_id: item.body.item_id, body: "x", author: "me" })).isError).toBe(true);
    // Another company: its item is no reference, its note is not found (and stays).
    const other = await t.newCompany(`Other ${stamp}`);
    const theirItem = await t.request("POST", "/v1/ext/items", { name: "Theirs", pipeline_id: other.pipeline.id, stage_id: other.pipeline.stages[0]!.id }, other.apiKey);
    expect(problemOf(await call(client, "add_note", { item_id: theirItem.body.item_id, body: "x" })).code).toBe("invalid_reference");
    const theirNote = await t.request("POST", "/v1/ext/notes", { item_id: theirItem.body.item_id, body: "theirs" }, other.apiKey);
    expect(problemOf(await call(client, "update_note", { note_id: theirNote.body.note_id, body: "mine now" })).code).toBe("not_found");
    expect(problemOf(await call(client, "delete_note", { note_id: theirNote.body.note_id })).code).toBe("not_found");
    expect((await t.request("GET", `/v1/ext/notes/${theirNote.body.note_id}`, undefined, other.apiKey)).body).toMatchObject({ body: "theirs", version: 1 });
    // A stale version is refused; then the delete is final and its stored create answer no longer holds the body.
    expect(problemOf(await call(client, "delete_note", { note_id: noteId, version: 2 }))).toMatchObject({ code: "version_conflict", current_version: 1 });
    expect((await call(client, "delete_note", { note_id: noteId })).content).toEqual([{ type: "text", text: `Deleted note ${noteId}; its body is erased.` }]);
    expect(problemOf(await call(client, "delete_note", { note_id: noteId })).code).toBe("not_found");
    const replay = problemOf(await call(client, "add_note", args));
    expect(replay.code).toBe("payload_erased");
    expect(JSON.stringify(replay)).not.toContain(`Secret plan ${stamp}`);
  });

  it("list_users lists the company's users only; a task assigned to one names its assignee", async () => {
    const { t } = env();
    const client = await open(t.apiKey);
    const stamp = `${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
    const prisma = t.server.ctx.prisma;
    const mine = await prisma.user.create({ data: { companyId: t.companyId, email: `ada-${stamp}@mcp.example`, name: `Ada ${stamp}`, role: "member", passwordHash: "x" } });
    const other = await t.newCompany(`Other ${stamp}`);
    const theirs = await prisma.user.create({ data: { companyId: other.companyId, email: `eve-${stamp}@mcp.example`, role: "member", passwordHash: "x" } });
    const users = (await call(client, "list_users", { limit: 100 })).structuredContent!.users as { user_id: string; name: string | null; email: string }[];
    expect(users).toContainEqual({ user_id: mine.id, name: `Ada ${stamp}`, email: `ada-${stamp}@mcp.example` });
    expect(users.map((u) => u.user_id)).not.toContain(theirs.id);
    expect((await t.request("GET", "/v1/ext/users?limit=100")).body).toEqual(users);
    const task = await call(client, "create_task", { title: "Demo", due_at: "2026-12-01T09:00:00Z", assigned_to: mine.id });
    expect(task.structuredContent).toMatchObject({ assigned_to: mine.id, assignee: { user_id: mine.id, name: `Ada ${stamp}` } });
    // Another company's user id is just an identifier here: no assignee.
    const foreign = await call(client, "create_task", { title: "Demo 2", due_at: "2026-12-01T09:00:00Z", assigned_to: theirs.id });
    expect(foreign.structuredContent).toMatchObject({ assigned_to: theirs.id, assignee: null });
  });

  it("list_events: what changed since an event, oldest first, page by page; each key sees what its scopes read", async () => {
    const { t } = env();
    const stamp = `${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
    const item = await t.request("POST", "/v1/ext/items", { name: `Watched ${stamp}`, pipeline_id: t.pipeline.id, stage_id: t.pipeline.stages[0]!.id });
    const task = await t.request("POST", "/v1/ext/tasks", { title: `Follow up ${stamp}`, due_at: "2026-12-01T09:00:00Z", assigned_to: "ada", item_id: item.body.item_id });
    await t.request("PATCH", `/v1/ext/items/${item.body.item_id}`, { name: `Watched ${stamp} (renamed)` });
    await t.request("PATCH", `/v1/ext/tasks/${task.body.task_id}`, { is_completed: true });
    type Listed = { events: { event_id: string; event: string; resource_id: string; data: Record<string, unknown> }[]; next_cursor: string | null };
    const list = async (client: Client, args: Record<string, unknown>) => {
      const result = await call(client, "list_events", args);
      if (result.isError) throw new Error(`list_events failed: ${result.content[0]?.text}`);
      return result.structuredContent as Listed;
    };

    // items:read: the item's events, newest first, and one page at a time back with cursor.
    const items = await open(await keyWith(["items:read"]));
    const newest = await list(items, { resource_id: item.body.item_id });
    expect(newest.events.map((e) => e.event)).toEqual(["item.updated", "item.created"]);
    expect(newest.events[0]!.data).toMatchObject({ item_id: item.body.item_id, name: `Watched ${stamp} (renamed)`, changed_fields: ["name"] });
    const first = await list(items, { resource_id: item.body.item_id, limit: 1 });
    expect(first.events.map((e) => e.event)).toEqual(["item.updated"]);
    const older = await list(items, { resource_id: item.body.item_id, limit: 1, cursor: first.next_cursor });
    expect(older.events.map((e) => e.event)).toEqual(["item.created"]);
    // Since the item's creation, oldest first; next_cursor is the next page's after. A task event is not this key's.
    const createdId = newest.events[1]!.event_id;
    const since = await list(items, { after: createdId, limit: 100 });
    expect(since.events.map((e) => e.event_id)).toContain(newest.events[0]!.event_id);
    expect(since.events.every((e) => !e.event.startsWith("task."))).toBe(true);
    expect(await list(items, { after: newest.events[0]!.event_id, resource_id: item.body.item_id })).toEqual({ events: [], next_cursor: null });
    expect((await list(items, { resource_id: task.body.task_id })).events).toEqual([]);

    // tasks:read only: the tool is there, and shows task events only (after an item event's id too).
    const tasks = await open(await keyWith(["tasks:read"]));
    expect((await tasks.listTools()).tools.map((tool) => tool.name)).toEqual(["describe_pipelines", "list_tasks", "get_task", "list_users", "list_events"]);
    const taskEvents = await list(tasks, { after: createdId, limit: 100 });
    expect(taskEvents.events.filter((e) => e.resource_id === task.body.task_id).map((e) => e.event)).toEqual(["task.created", "task.updated", "task.completed"]);
    expect(taskEvents.events.every((e) => e.event.startsWith("task."))).toBe(true);
    expect((await list(tasks, { resource_id: item.body.item_id })).events).toEqual([]);
    // Page by page with limit 1: next_cursor is the next page's after, and the pages add up to the whole.
    const walked: Listed["events"] = [];
    let after: string | null = createdId;
    for (let pages = 0; after !== null && pages < 10; pages++) {
      const page = await list(tasks, { after, limit: 1 });
      walked.push(...page.events);
      after = page.next_cursor;
    }
    expect(walked.length).toBeGreaterThanOrEqual(3);
    expect(walked).toEqual(taskEvents.events);
    expect((await list(tasks, { event: ["item.created", "item.updated"] })).events).toEqual([]);
    const completed = await list(tasks, { event: ["task.completed"], resource_id: task.body.task_id });
    expect(completed.events).toEqual([expect.objectContaining({ event: "task.completed", data: expect.objectContaining({ task_id: task.body.task_id, is_completed: true }) })]);
    expect((await list(tasks, { pipeline_id: t.pipeline.id, resource_id: task.body.task_id })).events).toHaveLength(3);

    // An unknown or another company's event id as after: cursor_expired; another company's pipeline: nothing.
    const other = await t.newCompany(`Other ${stamp}`);
    await t.request("POST", "/v1/ext/items", { name: "Theirs", pipeline_id: other.pipeline.id, stage_id: other.pipeline.stages[0]!.id }, other.apiKey);
    const theirs = (await t.request("GET", "/v1/ext/events?limit=1", undefined, other.apiKey)).body[0].event_id as string;
    expect(problemOf(await call(items, "list_events", { after: theirs })).code).toBe("cursor_expired");
    expect(problemOf(await call(items, "list_events", { after: "0190aaaa-0000-7000-8000-000000000000" })).code).toBe("cursor_expired");
    expect((await list(items, { pipeline_id: other.pipeline.id })).events).toEqual([]);
    expect((await call(items, "list_events", { event: ["item.exploded"] })).isError).toBe(true);
    // A key with neither scope has no such tool.
    const hooksOnly = await open(await keyWith(["hooks:manage"]), { toolsets: "all" });
    expect((await hooksOnly.listTools()).tools.map((tool) => tool.name)).not.toContain("list_events");
    const refused = await hooksOnly.callTool({ name: "list_events", arguments: {} }).catch((e: Error) => e);
    expect(refused instanceof Error ? refused.message : JSON.stringify(refused)).toMatch(/list_events/);
  });

  it("answers errors as isError results with the problem's code (another company's id is not_found)", async () => {
    const { t } = env();
    const client = await open(t.apiKey);
    const other = await t.newCompany(`Other ${Date.now()}`);
    const theirs = await t.request("POST", "/v1/ext/items", { name: "Theirs", pipeline_id: other.pipeline.id, stage_id: other.pipeline.stages[0]!.id }, other.apiKey);
    expect(problemOf(await call(client, "get_item", { item_id: theirs.body.item_id }))).toMatchObject({ code: "not_found" });
    const mine = await call(client, "create_item", { name: "Mine", pipeline_id: t.pipeline.id, stage_id: t.pipeline.stages[0]!.id });
    const stale = problemOf(await call(client, "update_item", { item_id: mine.structuredContent!.item_id, name: "x", version: 7 }));
    expect(stale).toMatchObject({ code: "version_conflict", current_version: 1 });
    const invalid = problemOf(await call(client, "create_item", { name: "Bad", pipeline_id: t.pipeline.id, stage_id: t.pipeline.stages[0]!.id, metadata: { email: "not an email" } }));
    expect(invalid.code).toMatch(/validation_failed|invalid_reference/);
    expect(problemOf(await call(client, "get_task", { task_id: "nope" })).code).toBe("not_found");
  });
}
