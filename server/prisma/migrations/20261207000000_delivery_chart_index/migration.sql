-- Issue 40 item 6 (CONTRACT "Console: events, activity and charts"): an endpoint's deliveries per hour by outcome,
-- with latency p50/p95, read from the delivery log itself (db/delivery-charts.ts). The delivery log's index on
-- (subscription_id, created_at DESC, id DESC) now also carries each delivery's state and last attempt's duration, so
-- an hour of the chart is an index-only range scan: 7 days of a 1,000,000-delivery endpoint read no heap page.
-- Same name and key columns as before (the delivery log's keyset pages use it unchanged). Writes: an attempt's result
-- also sets state, next_attempt_at or locked_until (already indexed, so never a HOT update); only the rare late result
-- of an attempt whose delivery another process now holds (db/webhook-dispatch.ts, `counted`) is no longer HOT.
DROP INDEX "webhook_deliveries_subscription_id_created_at_id_idx";
CREATE INDEX "webhook_deliveries_subscription_id_created_at_id_idx" ON "webhook_deliveries"("subscription_id", "created_at" DESC, "id" DESC) INCLUDE ("state", "last_duration_ms");
