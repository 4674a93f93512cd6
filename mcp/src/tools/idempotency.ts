/**
 * The `idempotency_key` argument of the create tools and upsert_item (CONTRACT "MCP server", "Writes"; CONTRACT
 * "Idempotency"): sent as `Idempotency-Key`, so a repeated call with the same key and arguments returns the first
 * result and creates or changes nothing.
 */
import { z } from "zod";
import { IDEMPOTENCY_KEY_PATTERN } from "@stageline/shared";

/** Sentence the description of every create tool and of upsert_item ends with. */
export const IDEMPOTENCY_ADVICE = "Pass an idempotency_key; reuse it to retry a call whose result you did not see.";

/**
 * The optional `idempotency_key` argument (1..255 printable ASCII). No description of its own: the tool's description
 * ends with {@link IDEMPOTENCY_ADVICE}, which says what it is for (saying it twice cost every conversation tokens).
 */
export const idempotencyKeyArg = z
  .string()
  .regex(IDEMPOTENCY_KEY_PATTERN, { error: "idempotency_key must be 1 to 255 printable ASCII characters." })
  .optional();
