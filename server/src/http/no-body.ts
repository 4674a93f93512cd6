/**
 * Operations that take no request body (CONTRACT "Item deletion and erasure": DELETE /v1/ext/items/{item_id} "takes
 * no body"): a body with content is refused rather than silently ignored, so a client that thinks it sends
 * something (a `version` in the body instead of the query, say) learns at once.
 */
import type { Request } from "express";
import { DomainError } from "@stageline/shared";

/**
 * Throws unless the request carried no body, or an empty JSON object (`{}`, which some HTTP clients send with every
 * request). A body the JSON parser did not read (another content type) counts as a body when it has a length or is
 * chunked.
 * @throws DomainError 400 `validation_failed`.
 */
export function rejectBody(req: Request): void {
  const body: unknown = req.body;
  if (body === undefined || body === null) {
    const length = Number(req.headers["content-length"] ?? 0);
    if (!(length > 0) && req.headers["transfer-encoding"] === undefined) return;
  } else if (typeof body === "object" && !Array.isArray(body) && Object.keys(body).length === 0) {
    return;
  }
  throw new DomainError("validation_failed", "This operation takes no request body. Send optional parameters in the query string (e.g. ?version=3).", {
    errors: [{ path: "body", message: "Leave the body out." }],
  });
}
