import { z } from "zod";
import { queryParam } from "./fields";

/** CONTRACT "Lists": page size when `limit` is not given. */
export const DEFAULT_PAGE_LIMIT = 100;

/** CONTRACT "Lists": largest accepted `limit`. */
export const MAX_PAGE_LIMIT = 500;

const LIMIT_MESSAGE = `limit must be a whole number from 1 to ${MAX_PAGE_LIMIT}.`;

/** CONTRACT "Lists": the `limit` query parameter, 1..500, default 100 (query strings are coerced to numbers). */
export const LimitSchema = queryParam(
  z.coerce
    .number({ error: LIMIT_MESSAGE })
    .int({ error: LIMIT_MESSAGE })
    .min(1, { error: LIMIT_MESSAGE })
    .max(MAX_PAGE_LIMIT, { error: LIMIT_MESSAGE })
    .default(DEFAULT_PAGE_LIMIT),
);

/** CONTRACT "Lists": the opaque `cursor` query parameter, taken from the `Link: <...>; rel="next"` URL. */
export const CursorSchema = queryParam(
  z
    .string({ error: "cursor must be given once, as the value from the Link header's next URL." })
    .min(1)
    .max(1024, { error: "cursor is not valid. Follow the next URL from the Link header instead of building it." })
    .optional(),
);

/** CONTRACT "Lists": the paging query of a list endpoint without filters (e.g. webhook deliveries). */
export const PageQuerySchema = z.object({
  limit: LimitSchema,
  cursor: CursorSchema,
});
/** Parsed paging query. */
export type PageQuery = z.infer<typeof PageQuerySchema>;
