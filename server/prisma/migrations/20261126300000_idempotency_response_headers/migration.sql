-- Issue 25 (upsert): a stored idempotent response keeps the response headers it must be replayed with beside
-- status, body and Location (POST /v1/ext/items/upsert answers `Stageline-Upsert: created | updated | unchanged`,
-- and a replay must say the same). NULL: no extra headers (every response stored before this migration).
ALTER TABLE "idempotency_keys" ADD COLUMN "response_headers" JSONB;
