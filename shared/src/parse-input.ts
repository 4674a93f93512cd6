/**
 * Parsing input with the contract's zod schemas, for every edge (API, admin API and CLI, console). A failure is a
 * `validation_failed` DomainError that lists every failing field in `errors` (CONTRACT "Errors": 400 lists every
 * failing field).
 */
import type { z } from "zod";
import { DomainError, toFieldErrors } from "./errors";

/**
 * Parses `input` (a body, a query object or a form) with `schema`; `undefined`/`null` parse as `{}`.
 * @param what names the input in the error's `detail`, e.g. "request body", "query string".
 * @returns the parsed value.
 * @throws DomainError `validation_failed` with one `errors` entry per failing field.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, what = "request body"): z.output<S> {
  const result = schema.safeParse(input ?? {});
  if (!result.success) {
    const errors = toFieldErrors(result.error);
    const paths = errors.map((e) => e.path || "body");
    const fields = paths.length > 10 ? `${paths.slice(0, 10).join(", ")} and ${paths.length - 10} more` : paths.join(", ");
    throw new DomainError("validation_failed", `The ${what} is invalid (${fields}).`, { errors });
  }
  return result.data;
}
