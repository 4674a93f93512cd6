/**
 * Request parsing with the contract's zod schemas. A failure is a `400 validation_failed` problem that lists every
 * failing field in `errors` (CONTRACT.md "Errors").
 */
import type { z } from "zod";
import { problem } from "./problem";

/** Formats zod issues as problem `errors[]`: `{ path: "metadata.email", message }`. */
export function zodIssues(error: z.ZodError): { path: string; message: string }[] {
  return error.issues.map((issue) => ({
    path: issue.path.length ? issue.path.map(String).join(".") : "(body)",
    message: issue.message,
  }));
}

/**
 * Parses `input` (a body or a query object) with `schema`.
 * @returns the parsed value.
 * @throws ProblemError 400 `validation_failed` with every failing field.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, what = "request body"): z.output<S> {
  const result = schema.safeParse(input ?? {});
  if (!result.success) {
    const errors = zodIssues(result.error);
    const fields = errors.map((e) => e.path).join(", ");
    throw problem("validation_failed", `The ${what} is invalid (${fields}).`, { errors });
  }
  return result.data;
}
