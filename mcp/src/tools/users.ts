/**
 * The people toolset (CONTRACT "People"; CONTRACT "MCP server"): list_users, the company's users, so an agent can
 * assign a task to a person (a task's `assigned_to` set to a `user_id` gets that user as its `assignee`).
 */
import { z } from "zod";
import { UserSchema } from "@stageline/shared";
import { READ, defineTool } from "../tool-definition";
import { countLine, nextCursor, pagingArgs } from "./paging";

/** How many users the one-line summary names (the rest are in structuredContent). */
const SUMMARY_NAMES = 5;

export const listUsers = defineTool({
  name: "list_users",
  title: "List users",
  description: "The company's users, by name. To assign a task, set its assigned_to to a user_id.",
  toolset: "people",
  scope: "any",
  operations: ["listUsers"],
  annotations: READ,
  input: z.strictObject({ ...pagingArgs }),
  output: z.object({ users: z.array(UserSchema), next_cursor: nextCursor }),
  run: async (ops, request) => {
    const page = await ops.listUsers(request);
    return { users: page.data, next_cursor: page.next_cursor };
  },
  summary: (r) => {
    const names = r.users.slice(0, SUMMARY_NAMES).map((u) => u.name ?? u.email);
    const more = r.users.length > SUMMARY_NAMES ? ", ..." : "";
    return `${countLine(r.users.length, "user", r.next_cursor)}${names.length ? ` ${names.join(", ")}${more}.` : ""}`;
  },
});
