import { z } from "zod";
import { NUL_FREE_PATTERN, integerQueryParam, nulFreeMessage, queryParam } from "./query-params";

/** CONTRACT "Lists": page size when `limit` is not given. */
export const DEFAULT_PAGE_LIMIT = 100;

/** CONTRACT "Lists": largest accepted `limit`. */
export const MAX_PAGE_LIMIT = 500;

const LIMIT_MESSAGE = `limit must be a whole number from 1 to ${MAX_PAGE_LIMIT}.`;

/** CONTRACT "Lists": the `limit` query parameter, 1..500, default 100 (plain decimal digits, trimmed). */
export const LimitSchema = integerQueryParam(
  z
    .number({ error: LIMIT_MESSAGE })
    .int({ error: LIMIT_MESSAGE })
    .min(1, { error: LIMIT_MESSAGE })
    .max(MAX_PAGE_LIMIT, { error: LIMIT_MESSAGE })
    .default(DEFAULT_PAGE_LIMIT),
);

/** CONTRACT "Lists": an opaque page cursor as a plain string field (`CursorSchema` is its query-parameter form). */
export const cursorField = z
    .string({ error: "cursor must be given once, as the value from the Link header's next URL." })
    .min(1)
    .max(1024, { error: "cursor is not valid. Follow the next URL from the Link header instead of building it." })
    .regex(NUL_FREE_PATTERN, { error: nulFreeMessage("cursor") })
    .meta({
      description:
        "Opaque: copy it from the `Link` header's `rel=\"next\"` URL (or follow that URL). Only the server issues cursors; one it did not issue is a 400 `validation_failed`.",
    });

/**
 * CONTRACT "Lists" and "HTTP semantics": the opaque `cursor` query parameter, taken from the `Link: <...>; rel="next"`
 * URL; only the server issues cursors (one it did not issue is a 400).
 */
export const CursorSchema = queryParam(cursorField.optional());

/** CONTRACT "Lists": the paging query of a list endpoint without filters (e.g. webhook deliveries). */
export const PageQuerySchema = z.object({
  limit: LimitSchema,
  cursor: CursorSchema,
});
/** Parsed paging query. */
export type PageQuery = z.infer<typeof PageQuerySchema>;
