/**
 * GET /v1/ext/items (spec "Items" list query parameters; CONTRACT "Lists": newest first, `limit`, `cursor`,
 * `Link: rel="next"`, keyset pagination).
 */
import { seedItems } from "./helpers/seed-items";
import { createSalesPipeline, startTestServer, type TestPipeline, type TestServer } from "./helpers/test-server";

type Api = (method: string, path: string, body?: unknown) => ReturnType<TestServer["request"]>;

/** Follows `Link: rel="next"` from `path` to the end; returns every page's item names. */
async function walkPages(api: Api, baseUrl: string, path: string): Promise<string[][]> {
  const pages: string[][] = [];
  let next: string | null = path;
  while (next) {
    const res = await api("GET", next);
    expect(res.status).toBe(200);
    pages.push(res.body.map((i: { name: string }) => i.name));
    const link = res.headers.get("link");
    if (!link) break;
    const match = /^<([^>]+)>; rel="next"$/.exec(link);
    expect(match).not.toBeNull();
    const url = new URL(match![1]!);
    expect(url.origin).toBe(baseUrl);
    next = url.pathname + url.search;
  }
  return pages;
}

const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 9, minute, 0));

describe("items: list", () => {
  let t: TestServer;
  let api: Api;
  const useFreshKey = async () => {
    const { key } = await t.newKey();
    api = (method, path, body) => t.request(method, path, body, key);
  };

  beforeAll(async () => {
    t = await startTestServer();
    // Nine items; "E", "F" and "G" share one creation time, so the order falls back to the id.
    await seedItems(t, t.companyId, t.pipeline, [
      { name: "A", createdAt: at(1) },
      { name: "B", createdAt: at(2), stage: 1 },
      { name: "C", createdAt: at(3), stage: 1, status: 2 },
      { name: "D", createdAt: at(4), stage: 2 },
      { name: "E", createdAt: at(5) },
      { name: "F", createdAt: at(5) },
      { name: "G", createdAt: at(5), stage: 1 },
      { name: "H", createdAt: at(6), stage: 3, status: 1 },
      { name: "I", createdAt: at(7) },
    ]);
  });
  afterAll(async () => {
    await t?.close();
  });

  /** The expected newest-first order: created_at desc, then id desc. */
  const expectedOrder = async (where: object = {}) => {
    const rows = await t.server.ctx.prisma.item.findMany({
      where: { companyId: t.companyId, ...where },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      select: { name: true },
    });
    return rows.map((r) => r.name);
  };

  describe("order and filters", () => {
    beforeAll(useFreshKey);

    it("returns a JSON array of the company's items, newest first", async () => {
      const res = await api("GET", "/v1/ext/items");
      expect(res.status).toBe(200);
      expect(Array.isArray(res.body)).toBe(true);
      const names = res.body.map((i: { name: string }) => i.name);
      expect(names).toEqual(await expectedOrder());
      expect(names.slice(0, 2)).toEqual(["I", "H"]);
      expect(names.at(-1)).toBe("A");
      expect(res.headers.get("link")).toBeNull();
    });

    it("returns full items in the Item format", async () => {
      const res = await api("GET", "/v1/ext/items?limit=1");
      expect(res.body[0]).toMatchObject({
        name: "I",
        pipeline: "Sales",
        stage: "Lead",
        status: "Open",
        email: null,
        deal_value: null,
        version: 1,
        created_at: at(7).toISOString(),
      });
    });

    it("filters by pipeline_id", async () => {
      const partners = await createSalesPipeline(t.server, t.companyId, "Partners");
      await seedItems(t, t.companyId, partners, [{ name: "P1", createdAt: at(8) }]);
      const res = await api("GET", `/v1/ext/items?pipeline_id=${partners.id}`);
      expect(res.body.map((i: { name: string }) => i.name)).toEqual(["P1"]);
      const sales = await api("GET", `/v1/ext/items?pipeline_id=${t.pipeline.id}`);
      expect(sales.body.map((i: { name: string }) => i.name)).not.toContain("P1");
      expect(sales.body).toHaveLength(9);
    });

    it("filters by stage_id", async () => {
      const res = await api("GET", `/v1/ext/items?stage_id=${t.pipeline.stages[1]!.id}`);
      expect(res.body.map((i: { name: string }) => i.name)).toEqual(["G", "C", "B"]);
    });

    it("filters by status_id", async () => {
      const res = await api("GET", `/v1/ext/items?status_id=${t.pipeline.stages[1]!.statuses[2]!.id}`);
      expect(res.body.map((i: { name: string }) => i.name)).toEqual(["C"]);
    });

    it("filters by created_after, strictly after the given instant", async () => {
      const res = await api("GET", `/v1/ext/items?pipeline_id=${t.pipeline.id}&created_after=${encodeURIComponent(at(5).toISOString())}`);
      expect(res.body.map((i: { name: string }) => i.name)).toEqual(["I", "H"]);
    });

    it("combines filters", async () => {
      const stage = t.pipeline.stages[0]!;
      const res = await api("GET", `/v1/ext/items?stage_id=${stage.id}&status_id=${stage.statuses[0]!.id}&created_after=2026-01-01T09:04:00Z`);
      expect(res.body.map((i: { name: string }) => i.name)).toEqual(["I", ...(await expectedOrder({ name: { in: ["E", "F"] } }))]);
    });

    it("treats an empty filter value as absent", async () => {
      const res = await api("GET", "/v1/ext/items?stage_id=&pipeline_id=");
      expect(res.status).toBe(200);
      expect(res.body.map((i: { name: string }) => i.name)).toEqual(await expectedOrder());
    });

    it("returns an empty array for a filter that matches nothing", async () => {
      const res = await api("GET", "/v1/ext/items?pipeline_id=no-such-pipeline");
      expect(res.status).toBe(200);
      expect(res.body).toEqual([]);
    });

    it("answers 400 for a created_after that is not an ISO 8601 date-time", async () => {
      const res = await api("GET", "/v1/ext/items?created_after=yesterday");
      expect(res.status).toBe(400);
      expect(res.body.errors[0].path).toBe("created_after");
    });
  });

  describe("pagination", () => {
    beforeAll(useFreshKey);

    it("walks every page with limit and Link rel=next, with no duplicates or gaps", async () => {
      const pages = await walkPages(api, t.url, `/v1/ext/items?pipeline_id=${t.pipeline.id}&limit=2`);
      expect(pages.map((p) => p.length)).toEqual([2, 2, 2, 2, 1]);
      expect(pages.flat()).toEqual(await expectedOrder({ pipelineId: t.pipeline.id }));
    });

    it("keeps the filters on the next-page URL", async () => {
      const pages = await walkPages(api, t.url, `/v1/ext/items?stage_id=${t.pipeline.stages[0]!.id}&limit=1`);
      expect(pages.flat()).toEqual(await expectedOrder({ stageId: t.pipeline.stages[0]!.id }));
    });

    it("sends no Link header on the last page", async () => {
      const res = await api("GET", `/v1/ext/items?pipeline_id=${t.pipeline.id}&limit=9`);
      expect(res.body).toHaveLength(9);
      expect(res.headers.get("link")).toBeNull();
    });

    it("rejects a limit outside 1..500 with 400", async () => {
      for (const limit of ["0", "501", "abc", "2.5"]) {
        const res = await api("GET", `/v1/ext/items?limit=${limit}`);
        expect(res.status).toBe(400);
        expect(res.body.errors[0].path).toBe("limit");
      }
    });

    it("rejects a cursor this API did not issue with 400", async () => {
      const res = await api("GET", "/v1/ext/items?cursor=not-a-cursor");
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("validation_failed");
    });

    it("returns 100 items per page by default", async () => {
      const other = await t.newCompany("Bulk Co");
      await seedItems(
        t,
        other.companyId,
        other.pipeline,
        Array.from({ length: 105 }, (_, i) => ({ name: `Bulk ${i}`, createdAt: new Date(Date.UTC(2026, 1, 1, 0, 0, i)) })),
      );
      const first = await t.request("GET", "/v1/ext/items", undefined, other.apiKey);
      expect(first.body).toHaveLength(100);
      expect(first.body[0].name).toBe("Bulk 104");
      const next = /^<([^>]+)>/.exec(first.headers.get("link")!)![1]!;
      const second = await t.request("GET", new URL(next).pathname + new URL(next).search, undefined, other.apiKey);
      expect(second.body.map((i: { name: string }) => i.name)).toEqual(["Bulk 4", "Bulk 3", "Bulk 2", "Bulk 1", "Bulk 0"]);
      expect(second.headers.get("link")).toBeNull();
    });
  });

  describe("scopes and tenants", () => {
    beforeAll(useFreshKey);

    it("lists only the calling company's items", async () => {
      const other = await t.newCompany("Stranger Co");
      await seedItems(t, other.companyId, other.pipeline, [{ name: "Not yours", createdAt: at(30) }]);
      const res = await api("GET", "/v1/ext/items?limit=500");
      expect(res.body.map((i: { name: string }) => i.name)).not.toContain("Not yours");
    });

    it("refuses a key lacking items:read with 403", async () => {
      const { key } = await t.newKey(["items:write", "tasks:read"]);
      const res = await t.request("GET", "/v1/ext/items", undefined, key);
      expect(res.status).toBe(403);
      expect(res.body.code).toBe("insufficient_scope");
    });
  });
});

describe("items: list filters (CONTRACT \"Lists\")", () => {
  let t: TestServer;
  let company: { companyId: string; apiKey: string; pipeline: TestPipeline };
  const get = (path: string) => t.request("GET", path, undefined, company.apiKey);
  const names = async (path: string) => {
    const res = await get(path);
    expect(res.status).toBe(200);
    return res.body.map((i: { name: string }) => i.name);
  };

  beforeAll(async () => {
    t = await startTestServer();
    company = await t.newCompany("Filter Co");
    await seedItems(t, company.companyId, company.pipeline, [
      { name: "Acme Deal", createdAt: at(1) },
      { name: "acme deal", createdAt: at(2), stage: 1 },
      { name: "Acme Deal 2", createdAt: at(3), updatedAt: at(40) },
      { name: "50% off", createdAt: at(4) },
      { name: "Fifty percent off", createdAt: at(5), updatedAt: at(41) },
      { name: "under_score", createdAt: at(6) },
      { name: "underXscore", createdAt: at(7), stage: 1, status: 1 },
    ]);
    // Another tenant with look-alike items: never listed.
    const stranger = await t.newCompany("Stranger Co");
    await seedItems(t, stranger.companyId, stranger.pipeline, [{ name: "Acme Deal", createdAt: at(8), updatedAt: at(50) }]);
  });
  afterAll(async () => {
    await t?.close();
  });

  it("short_id: exact and case-insensitive; an unknown one is an empty list", async () => {
    const all = (await get("/v1/ext/items?limit=500")).body as { short_id: string; name: string }[];
    const target = all.find((i) => i.name === "50% off")!;
    expect(await names(`/v1/ext/items?short_id=${encodeURIComponent(target.short_id.toLowerCase())}`)).toEqual(["50% off"]);
    expect(await names(`/v1/ext/items?short_id=${encodeURIComponent(target.short_id.slice(0, -1))}`)).not.toContain("50% off");
    expect(await names("/v1/ext/items?short_id=NOPE-1")).toEqual([]);
  });

  it("name: exact after trimming, case-insensitive, newest first", async () => {
    expect(await names("/v1/ext/items?name=%20%20ACME%20deal%20")).toEqual(["acme deal", "Acme Deal"]);
    expect(await names("/v1/ext/items?name=Acme")).toEqual([]);
  });

  it("q: case-insensitive substring of the name, with % and _ taken literally", async () => {
    expect(await names("/v1/ext/items?q=ACME")).toEqual(["Acme Deal 2", "acme deal", "Acme Deal"]);
    expect(await names("/v1/ext/items?q=0%25")).toEqual(["50% off"]);
    expect(await names("/v1/ext/items?q=r_s")).toEqual(["under_score"]);
    expect(await names("/v1/ext/items?q=zzz")).toEqual([]);
  });

  it("q must be 2..100 characters; bad values are 400 validation_failed", async () => {
    for (const q of ["a", "x".repeat(101)]) {
      const res = await get(`/v1/ext/items?q=${q}`);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("validation_failed");
      expect(res.body.errors[0].path).toBe("q");
    }
    const noZone = await get("/v1/ext/items?updated_after=2026-01-01T09:30:00");
    expect(noZone.status).toBe(400);
    expect(noZone.body.errors[0].path).toBe("updated_after");
  });

  it("updated_after: strictly after, any creation time", async () => {
    expect(await names(`/v1/ext/items?updated_after=${encodeURIComponent(at(30).toISOString())}`)).toEqual(["Fifty percent off", "Acme Deal 2"]);
    expect(await names(`/v1/ext/items?updated_after=${encodeURIComponent(at(40).toISOString())}`)).toEqual(["Fifty percent off"]);
  });

  it("filters combine with AND and with pipeline, stage and status; pages keep the filters", async () => {
    const stage1 = company.pipeline.stages[1]!;
    expect(await names(`/v1/ext/items?q=acme&stage_id=${stage1.id}`)).toEqual(["acme deal"]);
    expect(await names(`/v1/ext/items?q=score&status_id=${stage1.statuses[1]!.id}`)).toEqual(["underXscore"]);
    expect(await names(`/v1/ext/items?pipeline_id=${company.pipeline.id}&name=acme%20deal`)).toEqual(["acme deal", "Acme Deal"]);
    expect(await names(`/v1/ext/items?pipeline_id=unknown&q=acme`)).toEqual([]);
    const pages = await walkPages((m, p) => get(p), t.url, "/v1/ext/items?q=acme&limit=1");
    expect(pages).toEqual([["Acme Deal 2"], ["acme deal"], ["Acme Deal"]]);
  });
});
