-- Outbound webhook endpoints made in the console share webhook_subscriptions with REST hooks (issue 10).
-- Generated with `prisma migrate diff`, then edited by hand so existing subscriptions keep their event:
-- `event` becomes `events` = ARRAY[event] before the old column is dropped.

-- DropIndex
DROP INDEX "webhook_subscriptions_company_id_event_idx";

-- AlterTable
ALTER TABLE "webhook_subscriptions"
ADD COLUMN     "description" TEXT,
ADD COLUMN     "events" TEXT[],
ADD COLUMN     "origin" TEXT NOT NULL DEFAULT 'api',
ADD COLUMN     "paused_at" TIMESTAMPTZ(3);

UPDATE "webhook_subscriptions" SET "events" = ARRAY["event"];

ALTER TABLE "webhook_subscriptions" DROP COLUMN "event";

-- AlterTable
ALTER TABLE "webhook_deliveries" ADD COLUMN     "last_duration_ms" INTEGER;

-- AlterTable
ALTER TABLE "webhook_attempts" ADD COLUMN     "request_headers" JSONB;

-- CreateIndex
CREATE INDEX "webhook_deliveries_subscription_id_state_created_at_id_idx" ON "webhook_deliveries"("subscription_id", "state", "created_at" DESC, "id" DESC);
