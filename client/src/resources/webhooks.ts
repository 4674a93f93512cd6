/**
 * `client.webhooks` (CONTRACT "Client library"; spec "REST hooks", CONTRACT "Events and deliveries"): REST hook
 * subscriptions, their deliveries and sample payloads. Verify deliveries with `verifyWebhook`.
 */
import { idempotencyKeyOf, unwrap, unwrapPage, type ApiContext, type CreateOptions } from "../api";
import { iteratePages, type Page } from "../pagination";
import type { Item, Task, WebhookDelivery, WebhookDeliveryListQuery, WebhookListQuery, WebhookSubscribe, WebhookSubscription, WebhookSubscriptionCreated } from "../types";

/** REST hook subscriptions (scope `hooks:manage`). */
export class Webhooks {
  constructor(private readonly ctx: ApiContext) {}

  /**
   * Subscribes `target_url` to one event (POST /v1/ext/webhooks) with an `Idempotency-Key` (yours or a random one
   * reused by every attempt).
   * @returns the subscription with its `secret` (`whsec_...`, shown only here and by `rotateSecret`: store it).
   * @throws ValidationError (422 unknown event name, `problem.valid_events` lists the valid ones), other
   * StagelineErrors, ConnectionError.
   */
  subscribe(body: WebhookSubscribe, options?: CreateOptions): Promise<WebhookSubscriptionCreated> {
    const key = idempotencyKeyOf(options);
    return unwrap(this.ctx.api.POST("/v1/ext/webhooks", { body, params: { header: { "Idempotency-Key": key } }, fetch: this.ctx.keyed }));
  }

  /**
   * Deletes a subscription (DELETE /v1/ext/webhooks/{webhook_id}); sent once.
   * @throws NotFoundError when unknown or already deleted.
   */
  async unsubscribe(id: string): Promise<void> {
    await unwrap(this.ctx.api.DELETE("/v1/ext/webhooks/{webhook_id}", { params: { path: { webhook_id: id } }, fetch: this.ctx.unkeyed }));
  }

  /**
   * One page of subscriptions, newest first (GET /v1/ext/webhooks).
   * @returns `{ data, nextCursor }`.
   */
  list(query: WebhookListQuery = {}): Promise<Page<WebhookSubscription>> {
    return unwrapPage(this.ctx.api.GET("/v1/ext/webhooks", { params: { query }, fetch: this.ctx.read }));
  }

  /** Every subscription across all pages, fetching a page only when the caller reaches it. */
  iterate(query: WebhookListQuery = {}): AsyncGenerator<WebhookSubscription, void, undefined> {
    return iteratePages((cursor) => this.list({ ...query, cursor }), query.cursor);
  }

  /**
   * A sample payload as deliveries carry it (GET /v1/ext/webhooks/sample/items or /tasks; `hooks:manage` or the
   * read scope).
   * @param kind `items` (default) or `tasks`.
   * @returns an item or a task.
   */
  sample(kind?: "items"): Promise<Item>;
  sample(kind: "tasks"): Promise<Task>;
  sample(kind: "items" | "tasks" = "items"): Promise<Item | Task> {
    return kind === "tasks"
      ? unwrap(this.ctx.api.GET("/v1/ext/webhooks/sample/tasks", { fetch: this.ctx.read }))
      : unwrap(this.ctx.api.GET("/v1/ext/webhooks/sample/items", { fetch: this.ctx.read }));
  }

  /**
   * One page of a subscription's deliveries, newest first, with their attempts (GET
   * /v1/ext/webhooks/{webhook_id}/deliveries).
   * @param query `state` (`pending`, `succeeded`, `failed`), `limit`, `cursor`.
   * @returns `{ data, nextCursor }`.
   * @throws NotFoundError for an unknown subscription.
   */
  deliveries(id: string, query: WebhookDeliveryListQuery = {}): Promise<Page<WebhookDelivery>> {
    return unwrapPage(this.ctx.api.GET("/v1/ext/webhooks/{webhook_id}/deliveries", { params: { path: { webhook_id: id }, query }, fetch: this.ctx.read }));
  }

  /**
   * Sends a delivery again (POST .../deliveries/{delivery_id}/redeliver; answer 202); sent once.
   * @returns the delivery, pending again.
   * @throws NotFoundError (unknown or purged delivery), ValidationError (422 the subscription is disabled).
   */
  redeliver(id: string, deliveryId: string): Promise<WebhookDelivery> {
    return unwrap(
      this.ctx.api.POST("/v1/ext/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver", {
        params: { path: { webhook_id: id, delivery_id: deliveryId } },
        fetch: this.ctx.unkeyed,
      }),
    );
  }

  /**
   * Gives the subscription a new signing secret (POST /v1/ext/webhooks/{webhook_id}/rotate-secret); sent once.
   * Deliveries carry a signature with the old secret too while the overlap lasts, so verify with both meanwhile.
   * @returns the subscription with its new `secret`.
   * @throws NotFoundError for an unknown subscription.
   */
  rotateSecret(id: string): Promise<WebhookSubscriptionCreated> {
    return unwrap(this.ctx.api.POST("/v1/ext/webhooks/{webhook_id}/rotate-secret", { params: { path: { webhook_id: id } }, fetch: this.ctx.unkeyed }));
  }
}
