/**
 * The shape of one MCP tool (MCP "Tools"; CONTRACT "MCP server"): name, title, a description that tells an agent
 * when to use it, the four annotations, input and output as contract zod schemas, the toolset and scope that decide
 * whether a key sees it, the OpenAPI operations it calls, and `run`, which calls `StagelineOperations` and returns
 * the `structuredContent`. Adding a tool is one `defineTool` entry in a tools/ module and one line in registry.ts.
 */
import type { z } from "zod";
import type { Scope } from "@stageline/shared";
import type { StagelineOperations } from "./operations";

/**
 * Groups of tools a client turns on (`--toolsets`, `toolsets=`); `webhooks` and `note_edits` (update_note,
 * delete_note: see tools/notes.ts for why) are off unless asked for.
 */
export const TOOLSETS = ["items", "tasks", "pipelines", "notes", "people", "events", "note_edits", "webhooks"] as const;
export type Toolset = (typeof TOOLSETS)[number];
/** The toolsets served when none are named (CONTRACT "MCP server"). */
export const DEFAULT_TOOLSETS: readonly Toolset[] = ["items", "tasks", "pipelines", "notes", "people", "events"];

/** MCP tool annotations (all four are always stated). */
export interface ToolHints {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** The hints of a read: read-only, not destructive, idempotent, closed world. */
export const READ: ToolHints = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

/** One tool. `I`/`O` are the zod schemas of its arguments and its structuredContent. */
export interface ToolDefinition<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  name: string;
  title: string;
  description: string;
  toolset: Toolset;
  /**
   * The scope a key needs: one scope, a list of which any one will do (the events feed: `items:read` or `tasks:read`,
   * the operation then shows what those scopes read), or `any` (every valid key, as for the pipeline lookups).
   */
  scope: Scope | readonly Scope[] | "any";
  /** The OpenAPI operationIds it calls (server/src/openapi/operations.ts); checked by the contract test. */
  operations: readonly string[];
  annotations: ToolHints;
  input: I;
  output: O;
  /** Runs the tool: its validated arguments in, its structuredContent out. Rejects with `OperationError`. */
  run(ops: StagelineOperations, args: z.output<I>): Promise<z.output<O>>;
  /** The one-line text summary sent beside the structuredContent. */
  summary(result: z.output<O>): string;
}

/** Any tool, whatever its schemas (the registry's element type). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTool = ToolDefinition<any, any>;

/** Declares a tool with its types inferred from the schemas. */
export function defineTool<I extends z.ZodType, O extends z.ZodType>(tool: ToolDefinition<I, O>): ToolDefinition<I, O> {
  return tool;
}
