import { awayFromWindowEnd } from "./helpers/fixed-window";
import { startTestServer, type TestServer } from "./helpers/test-server";

describe("authentication and rate limiting", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t?.close();
  });
  /** The per-key limit's fixed window (60 s, aligned to the clock). */
  const windowMs = () => t.server.ctx.config.rateLimitWindowSeconds * 1000;

  it("rejects a request without a key as 401 problem+json", async () => {
    const res = await t.request("GET", "/v1/ext/pipelines", undefined, null);
    expect(res.status).toBe(401);
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ status: 401, code: "invalid_api_key", title: expect.any(String), type: expect.any(String) });
  });

  it("rejects an unknown key as 401", async () => {
    const res = await t.request("GET", "/v1/ext/pipelines", undefined, "sl_nope_nope");
    expect(res.status).toBe(401);
    expect(res.body.code).toBe("invalid_api_key");
  });

  it("rejects an expired key as 401 naming the expiry", async () => {
    const { key } = await t.newKey(undefined, { expiresAt: new Date(Date.now() - 1000) });
    const res = await t.request("GET", "/v1/ext/pipelines", undefined, key);
    expect(res.status).toBe(401);
    expect(res.body.detail).toMatch(/expired/);
  });

  it("answers 402 when the company subscription is inactive", async () => {
    const other = await t.newCompany("Lapsed Co");
    await t.server.ctx.prisma.company.update({ where: { id: other.companyId }, data: { subscriptionActive: false } });
    const res = await t.request("GET", "/v1/ext/pipelines", undefined, other.apiKey);
    expect(res.status).toBe(402);
    expect(res.body.code).toBe("subscription_inactive");
  });

  it("answers a body over 1 MiB with 413 payload_too_large and writes nothing", async () => {
    const { key } = await t.newKey();
    const big = { name: "x", pipeline_id: t.pipeline.id, stage_id: t.pipeline.stages[0]!.id, metadata: { notes: "a".repeat(1024 * 1024) } };
    const res = await t.request("POST", "/v1/ext/items", big, key);
    expect(res.status).toBe(413);
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ status: 413, code: "payload_too_large" });
    expect(await t.server.ctx.prisma.item.count({ where: { companyId: t.companyId } })).toBe(0);
  });

  it("counts requests without a valid key per client and still sends RateLimit headers", async () => {
    const res = await t.request("GET", "/v1/ext/pipelines", undefined, "sl_wrong_key");
    expect(res.status).toBe(401);
    expect(res.headers.get("ratelimit-limit")).toBe("60");
    expect(res.headers.get("ratelimit-remaining")).not.toBeNull();
  });

  it("answers an unknown path with a 404 problem", async () => {
    const res = await t.request("GET", "/v1/ext/nothing-here");
    expect(res.status).toBe(404);
    expect(res.body.code).toBe("not_found");
  });

  it("limits a key to 60 requests per window with RateLimit headers and Retry-After", async () => {
    const { key } = await t.newKey();
    // Start well inside a fixed window so all 61 requests fall into the same one (they take under a second).
    await awayFromWindowEnd(windowMs(), 15_000);
    let last;
    for (let i = 0; i < 60; i++) {
      last = await t.request("GET", "/v1/ext/nothing", undefined, key);
      expect(last.status).toBe(404);
    }
    expect(last!.headers.get("ratelimit-limit")).toBe("60");
    expect(last!.headers.get("ratelimit-remaining")).toBe("0");
    const limited = await t.request("GET", "/v1/ext/nothing", undefined, key);
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe("rate_limited");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(Number(limited.headers.get("retry-after"))).toBeLessThanOrEqual(60);
    // another key of the same company is counted separately
    const fresh = await t.request("GET", "/v1/ext/nothing");
    expect(fresh.status).toBe(404);
  });

  it("counts each request of a key exactly once, also when they arrive concurrently", async () => {
    const { key, id } = await t.newKey();
    await awayFromWindowEnd(windowMs(), 10_000);
    const sequential = [];
    for (let i = 0; i < 3; i++) sequential.push((await t.request("GET", "/v1/ext/me", undefined, key)).headers.get("ratelimit-remaining"));
    expect(sequential).toEqual(["59", "58", "57"]);
    const burst = await Promise.all(Array.from({ length: 20 }, () => t.request("GET", "/v1/ext/me", undefined, key)));
    const remaining = burst.map((r) => Number(r.headers.get("ratelimit-remaining"))).sort((a, b) => b - a);
    expect(remaining).toEqual(Array.from({ length: 20 }, (_, i) => 56 - i));
    const counter = await t.server.ctx.prisma.rateLimitWindow.findUnique({ where: { key: `key:${id}` } });
    expect(counter?.hits).toBe(23);
  });

  it("does not count a revoked key's requests against that key (they count per client IP)", async () => {
    // No window to stay in: the key's counter holds the first request's hit whichever window the second falls in.
    const { key, id } = await t.newKey();
    expect((await t.request("GET", "/v1/ext/me", undefined, key)).status).toBe(200);
    await t.server.ctx.prisma.apiKey.update({ where: { id }, data: { revokedAt: new Date() } });
    const refused = await t.request("GET", "/v1/ext/me", undefined, key);
    expect(refused.status).toBe(401);
    expect(refused.headers.get("ratelimit-remaining")).not.toBeNull();
    const counter = await t.server.ctx.prisma.rateLimitWindow.findUnique({ where: { key: `key:${id}` } });
    expect(counter?.hits).toBe(1);
  });
});
