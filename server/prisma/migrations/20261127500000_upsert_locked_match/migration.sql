-- Issue 33 (upsert speed): the upsert takes its match locks and looks for its match in ONE statement, so that an
-- upsert that creates is one autocommitted statement like a create (services/item-upsert.ts).
-- A READ COMMITTED statement reads with the snapshot taken when it starts, before any lock wait inside it: a match
-- query in the same statement as the lock would miss an item that the upsert holding the lock committed meanwhile.
-- A VOLATILE function, however, takes a fresh snapshot for each query it runs (PostgreSQL manual, "Function
-- Volatility Categories"). This one first takes the transaction-level advisory locks `lock_ids` one by one in
-- ascending order (the order db/upsert-locks.ts uses, so two upserts sharing several keys cannot deadlock), then runs
-- the match query `match_sql` (db/items.ts `duplicateHitsSql`, its bound values as `$1[n]` of `args`) with a snapshot
-- taken after every lock was granted: it sees every upsert of the same keys that committed before (rows `id`,
-- `matched_on`, `created_at` in the query's order). The locks are
-- held until the calling transaction (or autocommitted statement) ends. `match_sql` is the application's own
-- statement; every value in it is a bound parameter, never spliced text.
CREATE FUNCTION stageline_locked_match(lock_ids bigint[], match_sql text, args text[])
  RETURNS TABLE (id text, matched_on text[], created_at timestamptz)
  LANGUAGE plpgsql VOLATILE
  AS $$
    DECLARE
      lock_id bigint;
    BEGIN
      FOR lock_id IN SELECT DISTINCT u.l FROM unnest(lock_ids) AS u(l) ORDER BY u.l LOOP
        PERFORM pg_advisory_xact_lock(lock_id);
      END LOOP;
      RETURN QUERY EXECUTE 'SELECT h.id::text, h.matched_on::text[], h.created_at::timestamptz FROM (' || match_sql || ') h' USING args;
    END
  $$;
