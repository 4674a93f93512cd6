/**
 * The events toolset (CONTRACT "Events feed (catch up without a public URL)"; CONTRACT "MCP server"): list_events,
 * "what changed since": the company's retained events, newest first, or with `after` (an `event_id`) the ones
 * committed after it, oldest first. `data` of each event is exactly the body its delivery carries (the item, task or
 * note; the erased body once deleted). The feed decides what a key sees (`items:read`: item and note events,
 * `tasks:read`: task events), so the tool is open to a key with either scope.
 *
 * Continuing: newest first, `next_cursor` goes back as `cursor`; with `after`, `next_cursor` is the `event_id` to pass
 * as the next `after` (the feed's `Link: rel="next"` URL carries `after=` then). A page can be short or empty while a
 * `next_cursor` comes (the feed examines a bounded number of events per read), so continue while it is not null.
 */
import { z } from "zod";
import { EVENT_NAMES, FeedEventSchema, idField } from "@stageline/shared";
import { READ, defineTool } from "../tool-definition";
import { countLine, nextCursor, pagingArgs } from "./paging";

/**
 * One event as the tool's output schema states it: the contract's `FeedEventSchema`, with `event` as a string and
 * without the API document's field descriptions (the names and the tool's description say it in fewer tokens; the
 * schemas' validation is the contract's). Why a string: the feed shows every event name, and new names are an
 * additive change (CONTRACT "Versioning"), so an enum in the output schema would make a client that validates
 * results against a cached tools/list refuse the first event of a new name. The `event` argument keeps the enum.
 */
const undescribed = <T extends z.ZodType>(schema: T): T => schema.meta({ description: undefined }) as T;
const FeedEventOutput = FeedEventSchema.extend({
  event_id: undescribed(FeedEventSchema.shape.event_id),
  event: z.string(),
  occurred_at: undescribed(FeedEventSchema.shape.occurred_at),
  resource_id: undescribed(FeedEventSchema.shape.resource_id),
  data: undescribed(FeedEventSchema.shape.data),
});

export const listEvents = defineTool({
  name: "list_events",
  title: "List events",
  description: "What changed: item, task and note events (data: the record then), newest first; after=<event_id>: those since, oldest first (next page: after=next_cursor).",
  toolset: "events",
  scope: ["items:read", "tasks:read"],
  operations: ["listEvents"],
  annotations: READ,
  input: z.strictObject({
    event: z.array(z.enum(EVENT_NAMES)).optional(),
    resource_id: idField("resource_id").optional(),
    pipeline_id: idField("pipeline_id").optional(),
    after: idField("after").optional(),
    ...pagingArgs,
  }),
  output: z.object({ events: z.array(FeedEventOutput), next_cursor: nextCursor }),
  async run(ops, { event, ...request }) {
    const page = await ops.listEvents({ ...request, ...(event?.length ? { event: event.join(",") } : {}) });
    return { events: page.data, next_cursor: page.next_cursor };
  },
  summary: (r) => countLine(r.events.length, "event", r.next_cursor),
});
