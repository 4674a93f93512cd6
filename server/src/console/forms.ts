/**
 * Form errors in the GOV.UK Design System pattern (error summary + message beside each field): a service's
 * `400 validation_failed` problem lists failing `errors: [{ path, message }]`; `formErrors` maps them to form field
 * ids, and the page re-renders the form with status 400, the values as typed and those errors.
 */
import { DomainError } from "../services/errors";

/** One error of a form: `field` is the id of the input it belongs to (the summary links to `#field`). */
export interface FieldError {
  field: string;
  message: string;
}

/**
 * The field errors of `err` when it is a `validation_failed` DomainError, else rethrows `err` (the error page
 * renders it). `fieldFor` maps a problem path (e.g. `expires_at`) to a field id; unknown paths go to `fallback`.
 */
export function formErrors(err: unknown, fieldFor: Record<string, string>, fallback: string): FieldError[] {
  if (!(err instanceof DomainError) || err.code !== "validation_failed") throw err;
  const listed = (err.extras as { errors?: { path: string; message: string }[] }).errors ?? [];
  if (!listed.length) return [{ field: fallback, message: err.detail }];
  return listed.map((e) => ({ field: fieldFor[e.path.split(".")[0] ?? ""] ?? fallback, message: e.message }));
}

/** The error message for `field` among `errors`, or undefined (views use it beside each input). */
export function errorFor(errors: FieldError[], field: string): string | undefined {
  return errors.find((e) => e.field === field)?.message;
}
