-- Issue 32 (CONTRACT "Connect with OAuth 2.1"): the authorization server's state (oidc-provider's models: Grant,
-- AccessToken, RefreshToken, AuthorizationCode, Client, Session, Interaction, RegistrationAccessToken, ...) in the
-- service's database, so every server process sees the same grants and tokens. docs/oauth-storage.md is the format.
-- `id` is the model's id, except for a model whose id is a bearer secret (tokens, codes, registration access tokens):
-- there it is the base64url SHA-256 of the id, and `payload` does not hold the id (its `jti`) either.
CREATE TABLE "oauth_records" (
    "model" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "grant_id" TEXT,
    "uid" TEXT,
    "user_code" TEXT,
    "company_id" TEXT,
    "client_id" TEXT,
    "expires_at" TIMESTAMPTZ(3),
    "consumed_at" TIMESTAMPTZ(3),
    "last_used_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "oauth_records_pkey" PRIMARY KEY ("model", "id"),
    CONSTRAINT "oauth_records_company_id_fkey" FOREIGN KEY ("company_id") REFERENCES "companies"("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- revokeByGrantId (a grant revoked in the console, a reused refresh token) removes every record of the grant.
CREATE INDEX "oauth_records_grant_id_idx" ON "oauth_records"("grant_id") WHERE "grant_id" IS NOT NULL;
-- findByUid (sessions, interactions) and findByUserCode.
CREATE INDEX "oauth_records_model_uid_idx" ON "oauth_records"("model", "uid") WHERE "uid" IS NOT NULL;
CREATE INDEX "oauth_records_model_user_code_idx" ON "oauth_records"("model", "user_code") WHERE "user_code" IS NOT NULL;
-- The console's "Connected apps" (a company's grants) and "Developer apps" (a company's registered clients).
CREATE INDEX "oauth_records_company_id_model_idx" ON "oauth_records"("company_id", "model") WHERE "company_id" IS NOT NULL;
-- The expiry sweep.
CREATE INDEX "oauth_records_expires_at_idx" ON "oauth_records"("expires_at") WHERE "expires_at" IS NOT NULL;
