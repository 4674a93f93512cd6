/** Data access for fixed-window rate-limit counters (table `rate_limit_windows`), shared by every server process. */
import type { PrismaClient } from "../generated/prisma/client";

/**
 * Counts one hit for `key` in the fixed window that starts at `windowStart` (one atomic upsert).
 * A hit in a newer window resets the counter to 1.
 * @returns the hits so far in that window.
 */
export async function incrementWindow(prisma: PrismaClient, key: string, windowStart: Date): Promise<number> {
  const rows = await prisma.$queryRaw<{ hits: number }[]>`
    INSERT INTO rate_limit_windows (key, window_start, hits) VALUES (${key}, ${windowStart}, 1)
    ON CONFLICT (key) DO UPDATE SET
      hits = CASE WHEN rate_limit_windows.window_start = EXCLUDED.window_start THEN rate_limit_windows.hits + 1 ELSE 1 END,
      window_start = EXCLUDED.window_start
    RETURNING hits`;
  return Number(rows[0]?.hits ?? 1);
}

/** Takes one hit back (a request that should not count), never below zero. */
export async function decrementWindow(prisma: PrismaClient, key: string, windowStart: Date): Promise<void> {
  await prisma.$executeRaw`
    UPDATE rate_limit_windows SET hits = GREATEST(hits - 1, 0) WHERE key = ${key} AND window_start = ${windowStart}`;
}

/** Forgets a key's counter. */
export async function resetWindow(prisma: PrismaClient, key: string): Promise<void> {
  await prisma.$executeRaw`DELETE FROM rate_limit_windows WHERE key = ${key}`;
}
