/**
 * A delivery the local receiver got (server/test/helpers/receiver.ts), as Zapier hands a REST hook request to a
 * trigger's `perform`: headers capitalised with an `Http-` prefix, the exact body as `content`, the parsed body as
 * `cleanedRequest`, and the subscription kept at subscribe as `subscribeData` (its secret verifies the signature).
 */
import type { ReceivedRequest } from "../../../server/test/helpers/receiver";

/** The bundle members of a hook run for `delivery` of the subscription `subscribeData`. */
export function asZapierHook(delivery: ReceivedRequest, subscribeData: unknown): Record<string, unknown> {
  return {
    rawRequest: {
      method: "POST",
      headers: {
        "Http-Webhook-Id": delivery.headers["webhook-id"]!,
        "Http-Webhook-Timestamp": delivery.headers["webhook-timestamp"]!,
        "Http-Webhook-Signature": delivery.headers["webhook-signature"]!,
      },
      content: delivery.body.toString("utf8"),
    },
    cleanedRequest: JSON.parse(delivery.body.toString("utf8")),
    subscribeData,
  };
}
