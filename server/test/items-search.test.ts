/**
 * The items list's `q` filter across its two phases (db/items.ts `listItems`, db/item-search.ts; CONTRACT "Lists":
 * substring of the name, case-insensitive, taken literally, keyset pagination): a window of the list order first,
 * then the trigram index for the rows after the window. Every page must be exactly the page one ORDER BY over the
 * whole filtered list gives, wherever the window ends.
 */
import { listItems } from "../src/db/items";
import { SEARCH_WINDOW, searchWords, trigramProbe } from "../src/db/item-search";
import { seedItems, type SeedItemSpec } from "./helpers/seed-items";
import { startTestServer, type TestPipeline, type TestServer } from "./helpers/test-server";

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
/** Item `g` is `g` seconds older than T0 (g = 1 is the newest); `tie` items share one instant. */
const secondsAgo = (g: number) => new Date(T0 - g * 1000);

describe("search plan helpers", () => {
  it("counts the longest words of at least 3 letters or digits, in the term's order", () => {
    expect(searchWords("lead 900000").map((w) => w.text)).toEqual(["lead", "900000"]);
    expect(searchWords("50% off")).toEqual([{ text: "off", order: 1 }]);
    expect(searchWords("a_b").map((w) => w.text)).toEqual([]);
    expect(searchWords("Acme acme ACME deal").map((w) => w.text)).toEqual(["Acme", "deal"]);
    expect(searchWords("one three fourteen seventeen eighteen nineteen").map((w) => w.text)).toEqual([
      "fourteen",
      "seventeen",
      "eighteen",
      "nineteen",
    ]);
  });

  it("probes with the words at most 1% of the window holds, else with nothing (the whole term)", () => {
    const words = searchWords("Seeded lead 900000");
    expect(trigramProbe(words, [1000, 1000, 0], 1000)).toBe("%900000%");
    expect(trigramProbe(words, [10, 1000, 3], 1000)).toBe("%Seeded%900000%");
    expect(trigramProbe(words, [1000, 1000, 11], 1000)).toBeNull();
    expect(trigramProbe([], [], 1000)).toBeNull();
  });
});

describe("items: q across the window and the trigram index", () => {
  let t: TestServer;
  let company: { companyId: string; apiKey: string; pipeline: TestPipeline };
  /** The company's items in list order (created_at desc, id desc), as the database orders them. */
  let ordered: { id: string; name: string }[] = [];

  const expected = (term: string) => ordered.filter((i) => i.name.toLowerCase().includes(term.toLowerCase())).map((i) => i.name);

  /** Walks every page of `term` with `limit` items per page and the given window; returns the pages' names. */
  async function walk(term: string, limit: number, searchWindow: number): Promise<string[][]> {
    const pages: string[][] = [];
    let after: { createdAt: Date; id: string } | undefined;
    for (;;) {
      const rows = await listItems(t.server.ctx.prisma, { companyId: company.companyId, search: term, after, take: limit + 1 }, { searchWindow });
      const page = rows.slice(0, limit);
      pages.push(page.map((r) => r.name));
      if (rows.length <= limit) return pages;
      after = { createdAt: page.at(-1)!.createdAt, id: page.at(-1)!.id };
    }
  }

  beforeAll(async () => {
    t = await startTestServer();
    company = await t.newCompany("Search Co");
    // 40 items; 21..24 share one creation time (the order falls back to the id, also at a window's edge).
    const specs: SeedItemSpec[] = [];
    for (let g = 1; g <= 40; g++) {
      const name =
        g === 7 ? "Acme deal 7" : g === 15 ? "Back\\slash Ünïcode deal 15" : g === 23 ? "ACME Deal 23" : g === 31 ? "acme_deal 50% 31" : g === 38 ? "Acme deal 38" : `Plain deal ${g}`;
      specs.push({ name, createdAt: secondsAgo(g >= 21 && g <= 24 ? 21 : g) });
    }
    await seedItems(t, company.companyId, company.pipeline, specs);
    // Another tenant's look-alike: never listed.
    const stranger = await t.newCompany("Stranger Co");
    await seedItems(t, stranger.companyId, stranger.pipeline, [{ name: "Acme deal 0", createdAt: secondsAgo(0) }]);
    ordered = (
      await t.server.ctx.prisma.item.findMany({
        where: { companyId: company.companyId },
        orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        select: { id: true, name: true },
      })
    ).map((i) => ({ id: i.id, name: i.name }));
  });
  afterAll(async () => {
    await t?.close();
  });

  // Terms: common (every name), rare words behind a common one (the trigram probe), matches only past the window,
  // literal %, _ and \ (the whole-term probe), non-ASCII letters, and nothing at all.
  const terms = ["deal", "acme deal", "ACME", "deal 3", "l 50% 3", "e_d", "50%", "deal 23", "zzz", "acme deal 38", "k\\s", "ünïcode DEAL"];

  it("every page equals the matching rows in list order, for any window and page size", async () => {
    for (const term of terms) {
      const all = expected(term);
      for (const window of [1, 2, 3, 5, 8, 100]) {
        for (const limit of [1, 2, 3, 7, 100]) {
          const pages = await walk(term, limit, window);
          expect({ term, window, limit, names: pages.flat() }).toEqual({ term, window, limit, names: all });
          expect(pages.every((p, i) => p.length === limit || (i === pages.length - 1 && p.length < limit))).toBe(true);
        }
      }
    }
  });

  it("sanity: the terms cover matches past a small window, a term in every name and a term in none", () => {
    expect(expected("acme deal 38")).toEqual(["Acme deal 38"]);
    expect(expected("deal")).toHaveLength(40);
    expect(expected("zzz")).toEqual([]);
    expect(expected("50%")).toEqual(["acme_deal 50% 31"]);
  });
});

describe("items: q over more rows than the window (GET /v1/ext/items)", () => {
  let t: TestServer;
  let company: { companyId: string; apiKey: string; pipeline: TestPipeline };
  const get = (path: string) => t.request("GET", path, undefined, company.apiKey);

  /** Follows rel="next" from `path`; returns every page's names. */
  async function pages(path: string): Promise<string[][]> {
    const out: string[][] = [];
    let next: string | null = path;
    while (next) {
      const res = await get(next);
      expect(res.status).toBe(200);
      out.push(res.body.map((i: { name: string }) => i.name));
      const link = res.headers.get("link");
      next = link ? new URL(/^<([^>]+)>/.exec(link)![1]!).pathname + new URL(/^<([^>]+)>/.exec(link)![1]!).search : null;
    }
    return out;
  }

  const size = SEARCH_WINDOW + 200;
  beforeAll(async () => {
    t = await startTestServer();
    company = await t.newCompany("Deep Search Co");
    const specs: SeedItemSpec[] = [];
    for (let g = 1; g <= size; g++) {
      const name = g === SEARCH_WINDOW - 1 ? `Seeded lead ${g} Zephyr` : g > SEARCH_WINDOW + 50 && g % 40 === 0 ? `Seeded lead ${g} zephyr` : `Seeded lead ${g}`;
      specs.push({ name, createdAt: secondsAgo(g) });
    }
    await seedItems(t, company.companyId, company.pipeline, specs);
  });
  afterAll(async () => {
    await t?.close();
  });

  it("finds matches past the window, and pages across the switch to the trigram index", async () => {
    const zephyrs = [SEARCH_WINDOW - 1, ...Array.from({ length: size }, (_, i) => i + 1).filter((g) => g > SEARCH_WINDOW + 50 && g % 40 === 0)];
    const names = zephyrs.map((g) => `Seeded lead ${g} ${g === SEARCH_WINDOW - 1 ? "Zephyr" : "zephyr"}`);
    expect(await pages("/v1/ext/items?q=ZEPHYR&limit=2")).toEqual(
      Array.from({ length: Math.ceil(names.length / 2) }, (_, i) => names.slice(2 * i, 2 * i + 2)),
    );
    const deep = zephyrs.at(-2)!;
    expect(await pages(`/v1/ext/items?q=${encodeURIComponent(`lead ${deep} zephyr`)}`)).toEqual([[`Seeded lead ${deep} zephyr`]]);
  });

  it("a term matching nothing reads the window, then the index: an empty list", async () => {
    expect(await pages("/v1/ext/items?q=qqq%25")).toEqual([[]]);
    expect(await pages(`/v1/ext/items?q=${encodeURIComponent(`lead ${size + 1}`)}`)).toEqual([[]]);
  });

  it("a common term fills its page inside the window, newest first", async () => {
    const first = await get("/v1/ext/items?q=seeded%20LEAD&limit=3");
    expect(first.body.map((i: { name: string }) => i.name)).toEqual(["Seeded lead 1", "Seeded lead 2", "Seeded lead 3"]);
  });
});
