-- Issue 40 item 5 (CONTRACT "Console: events, activity and charts"): an item's page shows its Activity, its events
-- newest first with who caused each.
--
-- Who: the credential or person whose request wrote the event, recorded from now on (db/event-actor.ts). Earlier
-- events, and events written outside a request (test fixtures, the console's test event), have none: the console
-- shows "unknown". `actor_type` is `api_key`, `oauth_app` or `user`; `actor_id` the API key's, the OAuth grant's or
-- the user's id; `actor_label` the key's or app's name, or the user's name or email, as it was at the time.
ALTER TABLE "webhook_events" ADD COLUMN "actor_type" TEXT;
ALTER TABLE "webhook_events" ADD COLUMN "actor_id" TEXT;
ALTER TABLE "webhook_events" ADD COLUMN "actor_label" TEXT;

-- Which item an event belongs to, derived from what is stored, for every event old and new: an item event's
-- resource, a task's or note's body `item_id` (the item the task is linked to after the change; none for a task
-- without an item). Generated, so every statement that inserts or erases an event keeps it right without knowing
-- about it. Adding it rewrites the table once (the retained events: WEBHOOK_RETENTION_DAYS of them).
ALTER TABLE "webhook_events" ADD COLUMN "item_id" TEXT
  GENERATED ALWAYS AS (CASE WHEN "type" LIKE 'item.%' THEN "resource_id" ELSE ("payload" ->> 'item_id') END) STORED;

-- The Activity's page: one item's events in seq (commit) order, newest first from a cursor, a bounded range scan
-- whatever the item's or the company's history (db/item-activity.ts).
CREATE INDEX "webhook_events_company_id_item_id_seq_idx" ON "webhook_events"("company_id", "item_id", "seq")
  WHERE "item_id" IS NOT NULL;
