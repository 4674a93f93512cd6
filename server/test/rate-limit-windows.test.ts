/**
 * The rate-limit counters' fixed windows at a boundary (server/src/db/rate-limit.ts `COUNT_HIT_ON_CONFLICT`, the
 * statement every API request's key lookup and the console's failure limiters count with): a hit of a newer window
 * starts the count again, and a late hit of an older window (its request read the clock before the boundary and
 * reached the database after a request of the next window) counts in the newer window instead of resetting it.
 * Before the fix, the late hit set the counter back to (older window, 1) and the next hit of the new window to
 * (new window, 1): each interleaving lost the new window's count, so a burst at a boundary went through uncounted.
 */
import { incrementWindow, reserveHits } from "../src/db/rate-limit";
import { startTestServer, type TestServer } from "./helpers/test-server";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t?.close();
});

const MINUTE = 60_000;
const prisma = () => t.server.ctx.prisma;
const stored = async (key: string) =>
  (await prisma().$queryRawUnsafe<{ hits: number; window_start: Date }[]>(`SELECT hits, window_start FROM rate_limit_windows WHERE key = $1`, key))[0];

describe("fixed-window counters at a boundary", () => {
  const older = new Date(Math.floor(Date.now() / MINUTE) * MINUTE - MINUTE);
  const newer = new Date(older.getTime() + MINUTE);

  it("count a window's hits, and start again at 1 in a newer window", async () => {
    const key = `test-window-a-${Date.now()}`;
    expect(await incrementWindow(prisma(), key, older)).toBe(1);
    expect(await incrementWindow(prisma(), key, older)).toBe(2);
    expect(await incrementWindow(prisma(), key, newer)).toBe(1);
    expect(await incrementWindow(prisma(), key, newer)).toBe(2);
  });

  it("count a late hit of an older window in the newer one, never resetting it", async () => {
    const key = `test-window-b-${Date.now()}`;
    for (let i = 1; i <= 5; i++) expect(await incrementWindow(prisma(), key, newer)).toBe(i);
    // Interleaved late hits of the older window, as requests straddling the boundary arrive.
    expect(await incrementWindow(prisma(), key, older)).toBe(6);
    expect(await incrementWindow(prisma(), key, newer)).toBe(7);
    expect(await incrementWindow(prisma(), key, older)).toBe(8);
    expect(await incrementWindow(prisma(), key, newer)).toBe(9);
    const row = await stored(key);
    expect(row?.hits).toBe(9);
    expect(new Date(row!.window_start).getTime()).toBe(newer.getTime());
  });

  it("reserve against the newer window's count after a late hit (the MCP batch budget reads the same row)", async () => {
    const key = `test-window-c-${Date.now()}`;
    for (let i = 0; i < 8; i++) await incrementWindow(prisma(), key, newer);
    await incrementWindow(prisma(), key, older);
    expect(await reserveHits(prisma(), key, newer, 5, 10)).toEqual({ granted: 1, hits: 10 });
  });
});
