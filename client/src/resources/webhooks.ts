/**
 * `client.webhooks` (CONTRACT "Client library"; spec "REST hooks", CONTRACT "Events and deliveries"): REST hook
 * subscriptions, their deliveries and sample payloads. Verify deliveries with `verifyWebhook`.
 */
import { requireId, idempotencyKeyOf, unwrap, unwrapPage, type ApiContext, type CreateOptions } from "../api";
import { iteratePages, type Page } from "../pagination";
import type { Item, Note, Task, WebhookDelivery, WebhookDeliveryListQuery, WebhookListQuery, WebhookReplay, WebhookReplayResult, WebhookSubscribe, WebhookSubscription, WebhookSubscriptionCreated } from "../types";

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
    return unwrap(this.ctx.keyed((fetch) => this.ctx.api.POST("/v1/ext/webhooks", { body, params: { header: { "Idempotency-Key": key } }, fetch })));
  }

  /**
   * Deletes a subscription (DELETE /v1/ext/webhooks/{webhook_id}); sent once.
   * @throws NotFoundError when unknown or already deleted.
   * @throws TypeError (the promise rejects, nothing is sent) when an id is empty or blank.
   */
  async unsubscribe(id: string): Promise<void> {
    const path = { webhook_id: requireId("id", id) };
    await unwrap(this.ctx.unkeyed((fetch) => this.ctx.api.DELETE("/v1/ext/webhooks/{webhook_id}", { params: { path }, fetch })));
  }

  /**
   * One page of subscriptions, newest first (GET /v1/ext/webhooks).
   * @returns `{ data, nextCursor }`.
   */
  list(query: WebhookListQuery = {}): Promise<Page<WebhookSubscription>> {
    return unwrapPage(this.ctx.read((fetch) => this.ctx.api.GET("/v1/ext/webhooks", { params: { query }, fetch })));
  }

  /** Every subscription across all pages, fetching a page only when the caller reaches it. */
  iterate(query: WebhookListQuery = {}): AsyncGenerator<WebhookSubscription, void, undefined> {
    return iteratePages((cursor) => this.list({ ...query, cursor }), query.cursor);
  }

  /**
   * A sample payload as deliveries carry it (GET /v1/ext/webhooks/sample/items, /tasks or /notes; `hooks:manage` or
   * the read scope: `items:read` for items and notes, `tasks:read` for tasks).
   * @param kind `items` (default), `tasks` or `notes`.
   * @returns an item, a task or a note.
   */
  sample(kind?: "items"): Promise<Item>;
  sample(kind: "tasks"): Promise<Task>;
  sample(kind: "notes"): Promise<Note>;
  sample(kind: "items" | "tasks" | "notes" = "items"): Promise<Item | Task | Note> {
    if (kind === "tasks") return unwrap(this.ctx.read((fetch) => this.ctx.api.GET("/v1/ext/webhooks/sample/tasks", { fetch })));
    if (kind === "notes") return unwrap(this.ctx.read((fetch) => this.ctx.api.GET("/v1/ext/webhooks/sample/notes", { fetch })));
    return unwrap(this.ctx.read((fetch) => this.ctx.api.GET("/v1/ext/webhooks/sample/items", { fetch })));
  }

  /**
   * One page of a subscription's deliveries, newest first, with their attempts (GET
   * /v1/ext/webhooks/{webhook_id}/deliveries).
   * @param query `state` (`pending`, `succeeded`, `failed`), `limit`, `cursor`.
   * @returns `{ data, nextCursor }`.
   * @throws NotFoundError for an unknown subscription.
   * @throws TypeError (the promise rejects, nothing is sent) when an id is empty or blank.
   */
  async deliveries(id: string, query: WebhookDeliveryListQuery = {}): Promise<Page<WebhookDelivery>> {
    const path = { webhook_id: requireId("id", id) };
    return unwrapPage(this.ctx.read((fetch) => this.ctx.api.GET("/v1/ext/webhooks/{webhook_id}/deliveries", { params: { path, query }, fetch })));
  }

  /**
   * Sends a delivery again (POST .../deliveries/{delivery_id}/redeliver; answer 202); sent once.
   * @returns the delivery, pending again.
   * @throws NotFoundError (unknown or purged delivery), ValidationError (422 the subscription is disabled).
   * @throws TypeError (the promise rejects, nothing is sent) when an id is empty or blank.
   */
  async redeliver(id: string, deliveryId: string): Promise<WebhookDelivery> {
    const path = { webhook_id: requireId("id", id), delivery_id: requireId("deliveryId", deliveryId) };
    return unwrap(this.ctx.unkeyed((fetch) => this.ctx.api.POST("/v1/ext/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver", { params: { path }, fetch })));
  }

  /**
   * Gives the subscription a new signing secret (POST /v1/ext/webhooks/{webhook_id}/rotate-secret); sent once.
   * Deliveries carry a signature with the old secret too while the overlap lasts, so verify with both meanwhile.
   * @returns the subscription with its new `secret`.
   * @throws NotFoundError for an unknown subscription.
   * @throws TypeError (the promise rejects, nothing is sent) when an id is empty or blank.
   */
  async rotateSecret(id: string): Promise<WebhookSubscriptionCreated> {
    const path = { webhook_id: requireId("id", id) };
    return unwrap(this.ctx.unkeyed((fetch) => this.ctx.api.POST("/v1/ext/webhooks/{webhook_id}/rotate-secret", { params: { path }, fetch })));
  }

  /**
   * Queues again the subscription's deliveries of the events of a time range (POST
   * /v1/ext/webhooks/{webhook_id}/replay; answer 202; CONTRACT "Events feed"): failed ones only by default, or
   * delivered ones too with `only_failed: false`, each keeping its `webhook-id`. Sent once (not retried after a
   * network error or 5xx: a repeat would queue them again).
   * @param body `since` (inclusive, ISO 8601), optional `until` (exclusive, default now), `only_failed` (default true).
   * @returns `{ count }`: the deliveries queued (at most 1,000; at 1,000 call again for the rest).
   * @throws NotFoundError (unknown subscription), ValidationError (400 bad range), other StagelineErrors, ConnectionError.
   * @throws TypeError (the promise rejects, nothing is sent) when an id is empty or blank.
   */
  async replay(id: string, body: WebhookReplay): Promise<WebhookReplayResult> {
    const path = { webhook_id: requireId("id", id) };
    return unwrap(this.ctx.unkeyed((fetch) => this.ctx.api.POST("/v1/ext/webhooks/{webhook_id}/replay", { params: { path }, body, fetch })));
  }
}
