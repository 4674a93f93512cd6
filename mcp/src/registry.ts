/**
 * The tool registry (CONTRACT "MCP server"): every tool once, and which of them a connection gets. A key sees a tool
 * when its toolset is on (`DEFAULT_TOOLSETS` unless named), the key has the tool's scope (one of them, for a tool
 * that names several), and, under `readOnly`,
 * the tool is a read. Adding a tool is its `defineTool` entry plus one line in `TOOLS`; the contract test
 * (server/test/mcp-contract.test.ts) then asks for its OpenAPI operation.
 */
import type { Scope } from "@stageline/shared";
import { DEFAULT_TOOLSETS, TOOLSETS, type AnyTool, type Toolset } from "./tool-definition";
import { checkDuplicates, createItem, deleteItem, getItem, listItems, updateItem, upsertItem } from "./tools/items";
import { listEvents } from "./tools/events";
import { addNote, deleteNote, listNotes, updateNote } from "./tools/notes";
import { describePipelines } from "./tools/pipelines";
import { completeTask, createTask, getTask, listTasks, updateTask } from "./tools/tasks";
import { listUsers } from "./tools/users";
import { listWebhookDeliveries, listWebhooks, subscribeWebhook, unsubscribeWebhook } from "./tools/webhooks";

/** Every tool, in the order tools/list shows them. */
export const TOOLS: readonly AnyTool[] = [
  describePipelines,
  listItems,
  getItem,
  checkDuplicates,
  createItem,
  upsertItem,
  updateItem,
  deleteItem,
  listTasks,
  getTask,
  createTask,
  updateTask,
  completeTask,
  listUsers,
  listEvents,
  listNotes,
  addNote,
  updateNote,
  deleteNote,
  subscribeWebhook,
  listWebhooks,
  unsubscribeWebhook,
  listWebhookDeliveries,
];

/** What decides a connection's tools. */
export interface ToolAccess {
  /** The API key's scopes. */
  scopes: readonly Scope[];
  /** Only tools whose readOnlyHint is true. */
  readOnly?: boolean;
  /** The toolsets to serve (default `DEFAULT_TOOLSETS`). */
  toolsets?: readonly Toolset[];
}

/** Whether a key with `access` may call `tool` (used for tools/list and again on every call). */
export function allows(access: ToolAccess, tool: AnyTool): boolean {
  if (!(access.toolsets ?? DEFAULT_TOOLSETS).includes(tool.toolset)) return false;
  if (access.readOnly && !tool.annotations.readOnlyHint) return false;
  return tool.scope === "any" || toolScopes(tool).some((scope) => access.scopes.includes(scope));
}

/** The scopes of which a key needs one for `tool` (empty for a tool every valid key may call). */
export function toolScopes(tool: AnyTool): readonly Scope[] {
  if (tool.scope === "any") return [];
  return typeof tool.scope === "string" ? [tool.scope] : tool.scope;
}

/** The tools a key with `access` gets, in registry order. */
export function toolsFor(access: ToolAccess): AnyTool[] {
  return TOOLS.filter((tool) => allows(access, tool));
}

/**
 * Parses a `--toolsets` / `toolsets=` value: comma-separated toolset names, or `all`.
 * @returns the toolsets, or undefined for a blank value (the default).
 * @throws Error naming the unknown toolset.
 */
export function parseToolsets(value: string | undefined): Toolset[] | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  const names = value.split(",").map((s) => s.trim()).filter(Boolean);
  if (names.includes("all")) return [...TOOLSETS];
  for (const name of names) {
    if (!(TOOLSETS as readonly string[]).includes(name)) throw new Error(`Unknown toolset "${name}"; use ${TOOLSETS.join(", ")} or all.`);
  }
  return names as Toolset[];
}

/**
 * Parses a read-only flag given as text (`true`/`1`/`yes`/`false`/`0`/`no`; blank is false).
 * @throws Error for another value.
 */
export function parseReadOnly(value: string | undefined): boolean {
  const v = (value ?? "").trim().toLowerCase();
  if (v === "" || v === "false" || v === "0" || v === "no") return false;
  if (v === "true" || v === "1" || v === "yes") return true;
  throw new Error(`read_only must be true or false, not "${value}".`);
}
