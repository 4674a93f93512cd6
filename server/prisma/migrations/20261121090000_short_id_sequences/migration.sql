-- Per-pipeline short_id counters become PostgreSQL sequences (CONTRACT: a per-pipeline counter, never reused).
-- The old `pipelines.next_short_id` column had to be taken with an UPDATE whose row lock lasts until commit, so the
-- number was taken in its own autocommitted statement: one extra round trip and WAL flush per created item. nextval()
-- takes no row lock and is never rolled back, so the item insert takes its number inside its own statement, and
-- concurrent creates in one pipeline never wait for each other. A failed insert leaves a gap, as before.
--
-- Each pipeline owns the sequence named by pipeline_short_id_sequence(id), in the pipelines table's schema. A trigger
-- creates it with the pipeline row (whoever inserts it: the API, the admin CLI, the seed, tests) and drops it with
-- the row (also on a cascade from companies). Prisma's schema has no notion of sequences or triggers, so
-- `prisma migrate diff` neither sees nor reverts them.

CREATE FUNCTION pipeline_short_id_sequence(pipeline_id TEXT) RETURNS TEXT
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT 'pipeline_short_id_' || md5(pipeline_id) $$;

-- The trigger spells the name out instead of calling pipeline_short_id_sequence(), so it does not depend on the
-- search_path of whoever inserts or deletes the row; the sequence goes into the table's own schema.
CREATE FUNCTION pipelines_short_id_sequence_lifecycle() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    EXECUTE format('CREATE SEQUENCE %I.%I AS bigint MINVALUE 1 START WITH 1', TG_TABLE_SCHEMA,
      'pipeline_short_id_' || md5(NEW.id));
    RETURN NEW;
  END IF;
  EXECUTE format('DROP SEQUENCE IF EXISTS %I.%I', TG_TABLE_SCHEMA, 'pipeline_short_id_' || md5(OLD.id));
  RETURN OLD;
END
$$;

-- Sequences for the pipelines that already exist, continuing their counters.
DO $$
DECLARE
  p RECORD;
BEGIN
  FOR p IN SELECT id, next_short_id FROM pipelines LOOP
    EXECUTE format('CREATE SEQUENCE %I AS bigint MINVALUE 1 START WITH %s', pipeline_short_id_sequence(p.id),
      p.next_short_id);
  END LOOP;
END
$$;

CREATE TRIGGER pipelines_short_id_sequence
AFTER INSERT OR DELETE ON pipelines
FOR EACH ROW EXECUTE FUNCTION pipelines_short_id_sequence_lifecycle();

ALTER TABLE "pipelines" DROP COLUMN "next_short_id";
