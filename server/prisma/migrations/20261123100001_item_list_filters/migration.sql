-- CreateIndex
CREATE INDEX "items_stage_id_created_at_id_idx" ON "items"("stage_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "items_status_id_created_at_id_idx" ON "items"("status_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "items_company_id_updated_at_idx" ON "items"("company_id", "updated_at");


-- Expression indexes of the items list filters (CONTRACT "Lists"), not expressible in schema.prisma.
-- short_id: exact, case-insensitive.
CREATE INDEX "items_company_id_lower_short_id_idx" ON "items"("company_id", lower("short_id"));

-- name: exact, case-insensitive, in list order, so a filtered page is a keyset range scan.
CREATE INDEX "items_company_id_lower_name_created_at_id_idx" ON "items"("company_id", lower("name"), "created_at" DESC, "id" DESC);

-- q: substring of the name, case-insensitive. pg_trgm (a trusted extension, bundled with PGlite and PostgreSQL's
-- contrib) lets `lower(name) LIKE '%q%'` use a GIN trigram index: a page costs what the matches cost, not what the
-- table holds. Installed in "public" so that test runs in per-run schemas share one copy.
CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public;
CREATE INDEX "items_lower_name_trgm_idx" ON "items" USING gin (lower("name") public.gin_trgm_ops);
