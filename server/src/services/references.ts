/**
 * The 422 `invalid_reference` problem (CONTRACT "Errors"): a well-formed body whose references do not resolve
 * (pipeline, stage not in that pipeline, status not offered by the stage, unknown custom field, custom value of the
 * wrong type). Checks report their failures as `ProblemFieldError`s so one response can list all of them.
 */
import type { ProblemFieldError } from "@stageline/shared";
import { domainError, type DomainError } from "./errors";

/** The outcome of a check that may fail on several fields. */
export type Checked<T> = { ok: true; value: T } | { ok: false; errors: ProblemFieldError[] };

/** A passed check. */
export function passed<T>(value: T): Checked<T> {
  return { ok: true, value };
}

/** A failed check. */
export function failed<T>(errors: ProblemFieldError[]): Checked<T> {
  return { ok: false, errors };
}

/** The failures of `checks` (empty when every check passed). */
export function failuresOf(...checks: Checked<unknown>[]): ProblemFieldError[] {
  return checks.flatMap((c) => (c.ok ? [] : c.errors));
}

/** At most this many failure messages are repeated in `detail`; `errors` lists them all (bounded by the renderer). */
const DETAIL_MESSAGES = 5;

/**
 * `422 invalid_reference` listing every failing field in `errors`; `detail` repeats their messages.
 * @param errors at least one failure.
 */
export function invalidReference(errors: ProblemFieldError[]): DomainError {
  const shown = errors.slice(0, DETAIL_MESSAGES).map((e) => e.message);
  if (errors.length > DETAIL_MESSAGES) shown.push(`(${errors.length - DETAIL_MESSAGES} more problems in errors.)`);
  return domainError("invalid_reference", shown.join(" "), { errors });
}
