-- Item deletion and erasure (CONTRACT "Item deletion and erasure"; db/item-delete.ts, db/event-erasure.ts).

-- When the event's body was erased (it then reads `{ "item_id": ..., "erased": true }`); null while it holds values.
ALTER TABLE "webhook_events" ADD COLUMN "erased_at" TIMESTAMPTZ(3);

-- The events of one resource of a company (an item's events are those with its id as `resource_id`): erasing an
-- item's earlier events is an index lookup, never a scan of the company's events.
CREATE INDEX "webhook_events_company_id_resource_id_idx" ON "webhook_events"("company_id", "resource_id");

-- `item.deleted` events whose body still holds the item's last state, per company: each is erased once its last
-- delivery ends. Partial (Prisma cannot declare it): a sweep reads only these rows (of one company after that
-- company's unsubscribe), whatever the size of the event log.
CREATE INDEX "webhook_events_deleted_item_unerased_idx" ON "webhook_events"("company_id", "created_at") WHERE "type" = 'item.deleted' AND "erased_at" IS NULL;

-- Stored Idempotency-Key responses by the resource they created (`location`): a deleted item's stored create
-- response is found with an index lookup. Partial: error responses have no location.
CREATE INDEX "idempotency_keys_company_id_location_idx" ON "idempotency_keys"("company_id", "location") WHERE "location" IS NOT NULL;
