-- AlterTable
ALTER TABLE "webhook_events" ALTER COLUMN "payload" SET DATA TYPE JSON;

-- CreateIndex
CREATE INDEX "webhook_subscriptions_company_id_created_at_id_idx" ON "webhook_subscriptions"("company_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "webhook_deliveries_subscription_id_created_at_id_idx" ON "webhook_deliveries"("subscription_id", "created_at" DESC, "id" DESC);

