-- Issue 40 (CONTRACT "Request ids and the request log"): per company, every /v1/ext request (REST) and every MCP tool
-- call, with what the contract lists and nothing more: no bodies, query values, headers or secrets. Written in
-- batches by the request-log writer (services/request-log/), read newest first by the console's Requests page,
-- purged after REQUEST_LOG_RETENTION_DAYS (default 14).
CREATE TABLE "request_log" (
    "id" BIGSERIAL NOT NULL,
    "company_id" TEXT NOT NULL,
    "request_id" TEXT NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "method" TEXT NOT NULL,
    "route" TEXT NOT NULL,
    "path_ids" JSONB,
    "status" SMALLINT NOT NULL,
    "status_class" SMALLINT GENERATED ALWAYS AS ("status" / 100) STORED,
    "code" TEXT,
    "error_paths" TEXT[],
    "duration_ms" INTEGER NOT NULL,
    "credential_type" TEXT NOT NULL,
    "credential_id" TEXT NOT NULL,
    "credential_name" TEXT,
    "idempotency_key" TEXT,
    "replayed" BOOLEAN NOT NULL DEFAULT false,
    "rate_limit_remaining" INTEGER,
    "user_agent" TEXT,

    CONSTRAINT "request_log_pkey" PRIMARY KEY ("id")
);

ALTER TABLE "request_log" ADD CONSTRAINT "request_log_company_id_fkey" FOREIGN KEY ("company_id") REFERENCES "companies"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Newest first, keyset (at, id), unfiltered and filtered by status class or credential: each page is a bounded range
-- scan whatever the company's volume. The route filter reads the unfiltered index (few routes; documented).
CREATE INDEX "request_log_company_id_at_id_idx" ON "request_log"("company_id", "at" DESC, "id" DESC);
CREATE INDEX "request_log_company_id_status_class_at_id_idx" ON "request_log"("company_id", "status_class", "at" DESC, "id" DESC);
CREATE INDEX "request_log_company_id_credential_id_at_id_idx" ON "request_log"("company_id", "credential_id", "at" DESC, "id" DESC);
-- Search by Request-Id (scoped to the company by the reader).
CREATE INDEX "request_log_request_id_idx" ON "request_log"("request_id");
-- The retention purge walks the oldest entries of every company.
CREATE INDEX "request_log_at_idx" ON "request_log"("at");
