-- Webhook scheduling that costs the same at any backlog, and endpoint health (issue 17).
-- Written by hand. See docs/architecture.md "Webhook delivery scheduling".
--
-- Each subscription is a queue. `next_due_at` is when its queue should next be looked at by the dispatcher's
-- claim (the head delivery's due time, or the end of the lease of a batch in flight); null = nothing pending.
-- The claim walks the two partial indexes below (one per lane), so it reads the work due, never the backlog.
-- `healthy` is the lane: true while the endpoint's last attempt succeeded quickly; everything else (new,
-- failing, slow endpoints) is served by a separate concurrency budget.

ALTER TABLE "webhook_subscriptions"
ADD COLUMN "next_due_at" TIMESTAMPTZ(3),
ADD COLUMN "healthy" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN "failing_since" TIMESTAMPTZ(3),
ADD COLUMN "consecutive_failures" INTEGER NOT NULL DEFAULT 0;

-- Wake-ups: the outbox writes one row per (statement, subscription) it queued deliveries for, in the same
-- statement; the dispatcher consumes them and marks those queues due. Plain inserts: no lock taken on the
-- subscription row, so concurrent API writes never wait for each other or for the dispatcher.
CREATE TABLE "webhook_queue_wakeups" (
    "id" BIGSERIAL NOT NULL,
    "subscription_id" TEXT NOT NULL,
    CONSTRAINT "webhook_queue_wakeups_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "webhook_queue_wakeups_subscription_id_idx" ON "webhook_queue_wakeups"("subscription_id");

CREATE INDEX "webhook_subscriptions_due_healthy_idx" ON "webhook_subscriptions"("next_due_at")
  WHERE "healthy" AND "next_due_at" IS NOT NULL AND "disabled_at" IS NULL AND "paused_at" IS NULL;
CREATE INDEX "webhook_subscriptions_due_other_idx" ON "webhook_subscriptions"("next_due_at")
  WHERE NOT "healthy" AND "next_due_at" IS NOT NULL AND "disabled_at" IS NULL AND "paused_at" IS NULL;

-- Queues with pending deliveries are due now; health starts from the last attempt's result.
UPDATE "webhook_subscriptions" s SET "next_due_at" = now()
WHERE EXISTS (SELECT 1 FROM "webhook_deliveries" d WHERE d."subscription_id" = s."id" AND d."state" = 'pending');
