-- Issue 32 (CONTRACT "Connect with OAuth 2.1"), review: the purge of unused Dynamic Client Registration clients
-- (db/oauth-records.ts `purgeUnusedRegisteredClients`, 500 per statement, oldest first) picked each batch by reading
-- every `Client` record and sorting them, so draining N abandoned registrations read about N * N / 500 rows. DCR is
-- open to anyone (at most 60 registrations per IP per 10 minutes, oauth/endpoint-limits.ts): N is attacker-controlled,
-- and that work ran on the database every company shares. With this index a batch walks the DCR clients (no company)
-- oldest first and stops after its 500 (plus the used ones older than them, which it skips).
CREATE INDEX "oauth_records_dcr_client_age_idx" ON "oauth_records"("created_at") WHERE "model" = 'Client' AND "company_id" IS NULL;
