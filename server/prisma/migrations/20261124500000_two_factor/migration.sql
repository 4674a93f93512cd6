-- Issue 19 item 7: two-factor sign-in (TOTP, RFC 6238) for the console.
-- users.totp_secret: the TOTP secret, AES-256-GCM encrypted (services/two-factor.ts), set at setup and kept
-- while pending (totp_enabled_at NULL) until a valid code confirms it. totp_last_step: the last accepted RFC 6238
-- time step, so a code is accepted at most once (no replay within its window).
ALTER TABLE "users" ADD COLUMN "totp_secret" TEXT;
ALTER TABLE "users" ADD COLUMN "totp_enabled_at" TIMESTAMPTZ(3);
ALTER TABLE "users" ADD COLUMN "totp_last_step" BIGINT;

-- "Require two-factor sign-in for everyone" (owners set it).
ALTER TABLE "companies" ADD COLUMN "require_two_factor" BOOLEAN NOT NULL DEFAULT false;

-- A session after the password step of a user with two-factor sign-in: it reaches nothing but the second step.
ALTER TABLE "console_sessions" ADD COLUMN "second_factor_pending" BOOLEAN NOT NULL DEFAULT false;

-- Ten one-time recovery codes per user, stored as argon2id hashes; used_at marks a used code.
CREATE TABLE "two_factor_recovery_codes" (
    "id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "code_hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "used_at" TIMESTAMPTZ(3),

    CONSTRAINT "two_factor_recovery_codes_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "two_factor_recovery_codes_user_id_idx" ON "two_factor_recovery_codes"("user_id");
ALTER TABLE "two_factor_recovery_codes" ADD CONSTRAINT "two_factor_recovery_codes_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
