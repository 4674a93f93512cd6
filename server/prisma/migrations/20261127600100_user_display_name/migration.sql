-- Issue 30 item 4 (CONTRACT "People"): a console user's display name, set by the user in the console (null until
-- then; 1..255 characters, trimmed, no NUL: services/users.ts `setDisplayName`). GET /v1/ext/users lists a company's
-- users by name (nulls last), then email, with keyset pages: the index serves that order within one company.
ALTER TABLE "users" ADD COLUMN "name" TEXT;

CREATE INDEX "users_company_id_name_email_idx" ON "users" ("company_id", "name", "email");
