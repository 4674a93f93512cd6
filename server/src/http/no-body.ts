/**
 * Operations that take no request body (CONTRACT "Item deletion and erasure": DELETE /v1/ext/items/{item_id} "takes
 * no body"): a body with content is refused rather than silently ignored, so a client that thinks it sends
 * something (a `version` in the body instead of the query, say) learns at once.
 */
import type { Request } from "express";
import { DomainError } from "@stageline/shared";

/**
 * Throws unless the request carried no body, or an empty one (`{}` or nothing after JSON parsing).
 * @throws DomainError 400 `validation_failed`.
 */
export function rejectBody(req: Request): void {
  const body: unknown = req.body;
  if (body === undefined || body === null || body === "") return;
  if (typeof body === "object" && !Array.isArray(body) && Object.keys(body).length === 0) return;
  throw new DomainError("validation_failed", "This operation takes no request body. Send optional parameters in the query string (e.g. ?version=3).", {
    errors: [{ path: "body", message: "Leave the body out." }],
  });
}
