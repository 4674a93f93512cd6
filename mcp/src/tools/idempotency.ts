/**
 * The `idempotency_key` argument of the create tools (CONTRACT "MCP server", "Writes"; CONTRACT "Idempotency"): sent
 * as `Idempotency-Key`, so a repeated call with the same key and arguments returns the first result and creates
 * nothing.
 */
import { z } from "zod";
import { IDEMPOTENCY_KEY_PATTERN } from "@stageline/shared";

/** Sentence every create tool's description ends with. */
export const IDEMPOTENCY_ADVICE =
  "Pass an idempotency_key (any unique string) and reuse it when you repeat a call whose result you did not see: the repeat returns the first result instead of creating a duplicate.";

/** The optional `idempotency_key` argument (1..255 printable ASCII). */
export const idempotencyKeyArg = z
  .string()
  .regex(IDEMPOTENCY_KEY_PATTERN, { error: "idempotency_key must be 1 to 255 printable ASCII characters." })
  .optional()
  .describe("Unique per intended create; reuse it on retry.");
