/**
 * Issue 25, `items.upsert` end to end: @stageline/client against a real server (real HTTP, a fresh database: PGlite,
 * or PostgreSQL with TEST_DATABASE_URL). created / updated / unchanged from the `Stageline-Upsert` header, the
 * caller's Idempotency-Key replayed with the same result, 409 `ambiguous_match` as ConflictError carrying `matches`,
 * and a burst of 20 concurrent upserts of one email through the client making exactly one item.
 */
import { ConflictError, Stageline, ValidationError } from "../../client/src";
import { startTestServerWithRateLimit, type TestServer } from "../../server/test/helpers/test-server";

let t: TestServer;
let client: Stageline;
beforeAll(async () => {
  t = await startTestServerWithRateLimit(10_000);
  client = new Stageline({ apiKey: t.apiKey, baseUrl: t.url });
});
afterAll(async () => {
  await t?.close();
});

const body = (email: string, dealValue?: number) => ({
  name: "Client upsert",
  pipeline_id: t.pipeline.id,
  stage_id: t.pipeline.stages[0]!.id,
  metadata: { email, ...(dealValue === undefined ? {} : { deal_value: dealValue }) },
});

describe("items.upsert against a real server", () => {
  it("answers created, then updated, then unchanged, for one email", async () => {
    const email = `client-${Date.now()}@example.com`;
    const created = await client.items.upsert(body(email, 1));
    expect(created.result).toBe("created");
    expect(created.item).toMatchObject({ email, deal_value: 1, version: 1 });
    const updated = await client.items.upsert(body(email.toUpperCase(), 2));
    expect(updated).toMatchObject({ result: "updated", item: { item_id: created.item.item_id, deal_value: 2, version: 2 } });
    const unchanged = await client.items.upsert(body(email.toUpperCase(), 2));
    expect(unchanged).toMatchObject({ result: "unchanged", item: { version: 2 } });
    expect(await client.items.get(created.item.item_id)).toEqual(unchanged.item);
  });

  it("replays the caller's key with the same result, and refuses an upsert the pipeline cannot match", async () => {
    const email = `client-key-${Date.now()}@example.com`;
    const first = await client.items.upsert(body(email), { idempotencyKey: `upsert-${email}` });
    const again = await client.items.upsert(body(email), { idempotencyKey: `upsert-${email}` });
    expect(again).toEqual(first);
    expect(again.result).toBe("created");
    const noEmail = { name: "No email", pipeline_id: t.pipeline.id, stage_id: t.pipeline.stages[0]!.id };
    await expect(client.items.upsert(noEmail)).rejects.toMatchObject({ code: "upsert_unavailable" });
    await expect(client.items.upsert(noEmail)).rejects.toBeInstanceOf(ValidationError);
  });

  it("throws ConflictError with the matching ids for an ambiguous match", async () => {
    const email = `client-amb-${Date.now()}@example.com`;
    const a = await client.items.create(body(email));
    const b = await client.items.create(body(email));
    const err = await client.items.upsert(body(email)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConflictError);
    expect(err).toMatchObject({ code: "ambiguous_match", problem: { matches: [b.item_id, a.item_id] } });
  });

  it("makes one item from 20 concurrent upserts of one email", async () => {
    const email = `client-burst-${Date.now()}@example.com`;
    const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => client.items.upsert(body(email, i % 4))));
    expect(outcomes.filter((o) => o.result === "created")).toHaveLength(1);
    expect(new Set(outcomes.map((o) => o.item.item_id)).size).toBe(1);
    const found = (await client.items.list({ pipeline_id: t.pipeline.id, limit: 500 })).data.filter((i) => i.email === email);
    expect(found).toHaveLength(1);
  });
});
