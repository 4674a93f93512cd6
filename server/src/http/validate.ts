/**
 * Request parsing with the contract's zod schemas. A failure is a `400 validation_failed` problem that lists every
 * failing field in `errors` (CONTRACT.md "Errors").
 */
import type { z } from "zod";
import { toFieldErrors } from "@stageline/shared";
import { problem } from "./problem";

/**
 * Parses `input` (a body or a query object) with `schema`.
 * @returns the parsed value.
 * @throws ProblemError 400 `validation_failed` with every failing field.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, what = "request body"): z.output<S> {
  const result = schema.safeParse(input ?? {});
  if (!result.success) {
    const errors = toFieldErrors(result.error);
    const fields = errors.map((e) => e.path || "body").join(", ");
    throw problem("validation_failed", `The ${what} is invalid (${fields}).`, { errors });
  }
  return result.data;
}
