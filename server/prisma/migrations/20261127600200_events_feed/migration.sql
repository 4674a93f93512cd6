-- Issue 31 (events feed, CONTRACT "Events feed"): GET /v1/ext/events reads a company's events in `seq` order (newest
-- first, or after a given event oldest first) through this index, a bounded range scan from the cursor's position
-- whatever the company's history. `seq` is commit order within a company: every statement that inserts events takes
-- the company's event-order lock first (db/outbox.ts `eventOrderLockCte`).
CREATE INDEX "webhook_events_company_id_seq_idx" ON "webhook_events"("company_id", "seq");

-- The feed filtered by `resource_id` reads one item's or task's events in seq order: (company_id, resource_id, seq)
-- serves it as a range scan from the cursor, and still serves the erasure's lookup of an item's events, which used
-- the (company_id, resource_id) index it replaces.
DROP INDEX "webhook_events_company_id_resource_id_idx";
CREATE INDEX "webhook_events_company_id_resource_id_seq_idx" ON "webhook_events"("company_id", "resource_id", "seq");
