-- Issue 32 (CONTRACT "Connect with OAuth 2.1"), review: the records of one OAuth client by `client_id`. Dynamic Client
-- Registration is open to anyone, so the number of `Client` records is attacker-controlled, and two statements look
-- up records by client: the purge of unused DCR clients (db/oauth-records.ts `purgeUnusedRegisteredClients`: does a
-- `Grant` name this client? and the client's `RegistrationAccessToken` records) and deleting a console-registered
-- client (db/oauth-clients.ts `deleteCompanyClient`: every record with its `client_id`, and the records of its
-- grants). Without this index each of them read the whole table once per client. Partial like the table's other
-- indexes: sessions and interactions carry no client id.
CREATE INDEX "oauth_records_client_id_idx" ON "oauth_records"("client_id") WHERE "client_id" IS NOT NULL;
