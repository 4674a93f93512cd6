/**
 * CONTRACT "Subscription filters" and "Previous values in update events" through the client: `webhooks.subscribe`
 * sends `filter` and the subscription returns it; delivery bodies are typed per event (`WebhookEventPayloads`, from the
 * document's `webhooks` section) with `changed_fields` and `previous`.
 */
import crypto from "node:crypto";
import { Webhook } from "standardwebhooks";
import {
  verifyWebhook,
  type ItemChangedEvent,
  type Note,
  type NoteChangedEvent,
  type NoteDeletedEvent,
  type TaskChangedEvent,
  type WebhookEventName,
  type WebhookEventPayloads,
  type WebhookFilter,
} from "../src";
import { api, client, useNock, useVirtualClock } from "./helpers/setup";

useNock();
useVirtualClock();

const SUBSCRIPTION = {
  id: "w1",
  target_url: "https://hooks.example.com/h",
  event: "item.updated",
  created_at: "2026-03-01T09:30:00.000Z",
  disabled_at: null,
  disabled_reason: null,
  failing_since: null,
  next_attempt_at: null,
};

it("webhooks.subscribe sends the filter as given and returns the subscription's filter", async () => {
  const filter: WebhookFilter = { pipeline_id: "p1", stage_id: "s1", fields: ["stage", "deal_value"] };
  let sent: unknown;
  api()
    .post("/v1/ext/webhooks", (body) => {
      sent = body;
      return true;
    })
    .reply(201, { ...SUBSCRIPTION, filter, secret: "whsec_x" });
  const created = await client().webhooks.subscribe({ target_url: SUBSCRIPTION.target_url, event: "item.updated", filter });
  expect(sent).toEqual({ target_url: SUBSCRIPTION.target_url, event: "item.updated", filter });
  expect(created.filter).toEqual(filter);
});

it("webhooks.list returns filter null for a subscription without one", async () => {
  api().get("/v1/ext/webhooks").reply(200, [{ ...SUBSCRIPTION, filter: null }]);
  const page = await client().webhooks.list();
  const filters: (WebhookFilter | null)[] = page.data.map((s) => s.filter);
  expect(filters).toEqual([null]);
});

describe("typed delivery bodies", () => {
  const secret = `whsec_${crypto.randomBytes(32).toString("base64")}`;
  const now = new Date();
  const signed = (event: string, body: string) => ({
    "webhook-id": "evt_1",
    "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
    "webhook-signature": new Webhook(secret).sign("evt_1", now, body),
    "x-webhook-event": event,
  });

  it("item.updated: changed_fields and previous (stage and status names, then each changed field's old value)", () => {
    const body = JSON.stringify({
      item_id: "i1",
      name: "Acme renewal",
      stage: "Qualified",
      changed_fields: ["name", "stage", "deal_value"],
      previous: { stage: "Lead", status: "Open", name: "Acme", deal_value: null },
    });
    const delivery = verifyWebhook<WebhookEventPayloads["item.updated"]>(body, signed("item.updated", body), secret, { now });
    const data: ItemChangedEvent = delivery.data;
    const previousStage: string = data.previous.stage;
    expect(previousStage).toBe("Lead");
    expect(data.changed_fields).toEqual(["name", "stage", "deal_value"]);
    expect(data.previous.deal_value).toBeNull();
  });

  it("task.completed: the same body as task.updated, with the previous completion state", () => {
    const body = JSON.stringify({ task_id: "t1", is_completed: true, changed_fields: ["is_completed", "completed_at"], previous: { is_completed: false, completed_at: null } });
    const delivery = verifyWebhook<WebhookEventPayloads["task.completed"]>(body, signed("task.completed", body), secret, { now });
    const data: TaskChangedEvent = delivery.data;
    const same: WebhookEventPayloads["task.updated"] = data;
    expect(same.previous).toEqual({ is_completed: false, completed_at: null });
  });

  it("note.created, note.updated and note.deleted are in the catalogue, with the Note, its change and its last state", () => {
    const names: WebhookEventName[] = ["note.created", "note.updated", "note.deleted"];
    expect(names).toHaveLength(3);
    const note = { note_id: "n1", item_id: "i1", body: "**Hi**", pinned: false, created_by: "k1", created_at: "2026-03-02T10:15:00.000Z", updated_at: "2026-03-02T10:15:00.000Z", version: 1 };

    const createdBody = JSON.stringify(note);
    const created: Note = verifyWebhook<WebhookEventPayloads["note.created"]>(createdBody, signed("note.created", createdBody), secret, { now }).data;
    expect(created.note_id).toBe("n1");

    const updatedBody = JSON.stringify({ ...note, pinned: true, version: 2, changed_fields: ["pinned"], previous: { pinned: false } });
    const updated = verifyWebhook<WebhookEventPayloads["note.updated"]>(updatedBody, signed("note.updated", updatedBody), secret, { now });
    const change: NoteChangedEvent = updated.data;
    expect(updated.event).toBe("note.updated");
    expect(change.changed_fields).toEqual(["pinned"]);
    expect(change.previous.pinned).toBe(false);

    const deletedBody = JSON.stringify({ ...note, deleted_at: "2026-03-09T11:45:00.000Z" });
    const deleted: NoteDeletedEvent = verifyWebhook<WebhookEventPayloads["note.deleted"]>(deletedBody, signed("note.deleted", deletedBody), secret, { now }).data;
    expect(deleted.deleted_at).toBe("2026-03-09T11:45:00.000Z");
  });
});
