-- Retention of the webhook delivery log (CONTRACT "Events and deliveries"; db/webhook-retention.ts).

-- Ended deliveries by the time they ended: a purge batch reads only rows old enough to delete, never pending ones.
-- Partial (Prisma cannot declare it): pending deliveries, the dispatcher's working set, are not in it.
CREATE INDEX "webhook_deliveries_completed_at_ended_idx" ON "webhook_deliveries"("completed_at") WHERE "state" IN ('succeeded', 'failed');

-- Deliveries of an event: "is any delivery of this event left?" and the ON DELETE CASCADE check of each deleted
-- event (without it, every deleted event read the whole table).
CREATE INDEX "webhook_deliveries_event_id_idx" ON "webhook_deliveries"("event_id");

-- Events in creation order: the purge walks the old ones from a cursor.
CREATE INDEX "webhook_events_created_at_id_idx" ON "webhook_events"("created_at", "id");
