-- Issue 19: a pipeline can be archived (CONTRACT "Pipelines, blueprints, transitions"): not listed by
-- GET /v1/ext/pipelines, no new items; restored by setting it back to NULL.
ALTER TABLE "pipelines" ADD COLUMN "archived_at" TIMESTAMPTZ(3);
