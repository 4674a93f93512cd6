-- Issue 25 (upsert): an index for duplicate detection on custom fields, so that the upsert's match query (and the
-- duplicate check's) reads the matching items instead of every item of the pipeline. Custom fields are configured per
-- pipeline, so no per-field expression index fits; instead one GIN index over the metadata as duplicate detection
-- compares it: every string value trimmed (space, tab, CR, LF) and lower-cased, other values as they are. A search
-- for `field = value` adds `stageline_match_metadata(metadata) @> {field: normalized value}` (db/items.ts
-- `duplicateCondition`), which this index answers; the exact comparison stays in the query.
CREATE FUNCTION stageline_match_metadata(m jsonb) RETURNS jsonb
  LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
  AS $$
    SELECT coalesce(
      jsonb_object_agg(e.key, CASE WHEN jsonb_typeof(e.value) = 'string' THEN to_jsonb(lower(btrim(e.value #>> '{}', E' \t\r\n'))) ELSE e.value END),
      '{}'::jsonb)
    FROM jsonb_each(CASE WHEN jsonb_typeof(m) = 'object' THEN m ELSE '{}'::jsonb END) AS e
  $$;

CREATE INDEX "items_match_metadata_idx" ON "items" USING gin (stageline_match_metadata("metadata") jsonb_path_ops);
