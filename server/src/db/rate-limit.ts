/** Data access for fixed-window rate-limit counters (table `rate_limit_windows`), shared by every server process. */
import type { PrismaClient } from "../generated/prisma/client";
import { query } from "./sql";

/**
 * The conflict clause that turns `INSERT INTO rate_limit_windows (key, window_start, hits) ... 1` into "count one
 * hit": the same window adds one, a newer window starts again at 1. Ends with `RETURNING hits`. Shared with
 * db/api-keys.ts `findKeyAndCountHit`, which counts the hit in the key lookup's own statement.
 */
export const COUNT_HIT_ON_CONFLICT = `ON CONFLICT (key) DO UPDATE SET
       hits = CASE WHEN rate_limit_windows.window_start = EXCLUDED.window_start THEN rate_limit_windows.hits + 1 ELSE 1 END,
       window_start = EXCLUDED.window_start
     RETURNING hits`;

/**
 * Counts one hit for `key` in the fixed window that starts at `windowStart` (one atomic upsert, raw SQL through
 * db/sql.ts: it runs on every API request). A hit in a newer window resets the counter to 1.
 * @returns the hits so far in that window.
 */
export async function incrementWindow(prisma: PrismaClient, key: string, windowStart: Date): Promise<number> {
  const rows = await query<{ hits: number }>(
    prisma,
    `INSERT INTO rate_limit_windows (key, window_start, hits) VALUES ($1, $2::timestamptz, 1) ${COUNT_HIT_ON_CONFLICT}`,
    [key, windowStart],
  );
  return Number(rows[0]?.hits ?? 1);
}

/** Takes one hit back (a request that should not count), never below zero. */
export async function decrementWindow(prisma: PrismaClient, key: string, windowStart: Date): Promise<void> {
  await query(
    prisma,
    `UPDATE rate_limit_windows SET hits = GREATEST(hits - 1, 0) WHERE key = $1 AND window_start = $2::timestamptz`,
    [key, windowStart],
  );
}

/** Forgets a key's counter. */
export async function resetWindow(prisma: PrismaClient, key: string): Promise<void> {
  await query(prisma, `DELETE FROM rate_limit_windows WHERE key = $1`, [key]);
}
