-- Rate-limit counters are written on every API request (one upsert each). UNLOGGED skips the write-ahead log for
-- them, which makes that upsert much cheaper. The trade-off is accepted on purpose: after a PostgreSQL crash (not a
-- clean shutdown) the table comes back empty, so the current 60-second windows restart from zero; an unlogged table
-- is also not copied to streaming replicas. Counters are short-lived and losing them at worst lets a key make up to
-- one extra window's worth of requests, which is fine. Prisma's schema has no notion of UNLOGGED, so
-- `prisma migrate diff` does not see (and will not revert) this.
ALTER TABLE "rate_limit_windows" SET UNLOGGED;
