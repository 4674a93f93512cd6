/** Data access for fixed-window rate-limit counters (table `rate_limit_windows`), shared by every server process. */
import type { PrismaClient } from "../generated/prisma/client";
import { query, sqlOf } from "./sql";

/**
 * The conflict clause that turns `INSERT INTO rate_limit_windows (key, window_start, hits) ... 1` into "count one
 * hit": the same window adds one, a newer window starts again at 1, and a hit of an OLDER window than the stored one
 * (a request that read the clock just before a boundary and reached the database after a request of the next window)
 * counts in the stored window: the counter never goes back to an older window, so such a late hit cannot reset the
 * new window's count (which let a burst at a boundary through uncounted). Ends with `RETURNING hits`. Shared with
 * db/api-keys.ts `findKeyAndCountHit`, which counts the hit in the key lookup's own statement.
 */
export const COUNT_HIT_ON_CONFLICT = `ON CONFLICT (key) DO UPDATE SET
       hits = CASE WHEN rate_limit_windows.window_start >= EXCLUDED.window_start THEN rate_limit_windows.hits + 1 ELSE 1 END,
       window_start = GREATEST(rate_limit_windows.window_start, EXCLUDED.window_start)
     RETURNING hits`;

/**
 * Counts one hit for `key` in the fixed window that starts at `windowStart` (one atomic upsert, raw SQL through
 * db/sql.ts: it runs on every API request). A hit in a newer window resets the counter to 1; a late hit of an older
 * window counts in the stored, newer one (`COUNT_HIT_ON_CONFLICT`).
 * @returns the hits so far in the counter's window.
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

/**
 * Reserves up to `wanted` more hits for `key` in the window that starts at `windowStart`, never beyond `limit`: in one
 * transaction the counter row is locked (`FOR UPDATE`: a concurrent reservation or hit of another process waits, then
 * sees this one's count), what the window has left is granted, and the count is raised by it, so several server
 * processes sharing the database can never together grant more than the window has left. A row of an older window
 * counts as empty (the window rolled over since). Used for a JSON-RPC batch on the MCP endpoint (mcp/batch-budget.ts),
 * whose first hit the key lookup already counted.
 * @returns `granted` (0..wanted) and `hits`, the window's count after the reservation (0 and 0 when the key has no
 * counter row: the key lookup always makes one).
 */
export async function reserveHits(
  prisma: PrismaClient,
  key: string,
  windowStart: Date,
  wanted: number,
  limit: number,
): Promise<{ granted: number; hits: number }> {
  if (wanted <= 0) return { granted: 0, hits: 0 };
  return sqlOf(prisma).transaction(async (q) => {
    const rows = await q<{ hits: number; current: boolean }>(
      `SELECT hits, window_start >= $2::timestamptz AS current FROM rate_limit_windows WHERE key = $1 FOR UPDATE`,
      [key, windowStart],
    );
    const row = rows[0];
    if (!row) return { granted: 0, hits: 0 };
    const used = row.current ? Number(row.hits) : 0;
    const granted = Math.min(wanted, Math.max(limit - used, 0));
    await q(
      `UPDATE rate_limit_windows SET hits = $2::int, window_start = GREATEST(window_start, $3::timestamptz) WHERE key = $1`,
      [key, used + granted, windowStart],
    );
    return { granted, hits: used + granted };
  });
}
