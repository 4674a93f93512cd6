-- Subscription filters (CONTRACT "Subscription filters (REST hooks)"; db/outbox.ts fanOutCtes applies them).
-- filter_fields: an empty array means "no fields filter" (Prisma's String[] is NOT NULL with a default).
ALTER TABLE "webhook_subscriptions" ADD COLUMN "filter_pipeline_id" TEXT,
ADD COLUMN "filter_stage_id" TEXT,
ADD COLUMN "filter_fields" TEXT[] DEFAULT ARRAY[]::TEXT[];

-- The fan-out reads a company's active subscriptions whose pipeline filter is none ('') or one of the event's
-- pipelines, in ONE index scan (= ANY of the two values): subscriptions filtered to other pipelines are never read,
-- so they cost an event nothing. Partial (Prisma cannot declare it): disabled and paused ones queue nothing.
CREATE INDEX "webhook_subscriptions_fan_out_idx" ON "webhook_subscriptions"("company_id", (COALESCE("filter_pipeline_id", '')))
  WHERE "disabled_at" IS NULL AND "paused_at" IS NULL;
