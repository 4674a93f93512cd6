/**
 * `items.upsert` (CONTRACT "Upsert", "Client library"): reads the `Stageline-Upsert` header into `result`, always
 * sends an Idempotency-Key (a random one reused by every attempt of the call, or the caller's), maps 409
 * `ambiguous_match` to ConflictError with the problem's `matches`, and refuses an answer without the header.
 * nock plays the server; a real server is exercised by test/e2e/client-upsert.test.ts.
 */
import { ConflictError, ValidationError } from "../src";
import { api, client, CREATE_BODY, item, problem, recordingKey, useNock, useVirtualClock } from "./helpers/setup";

useNock();
useVirtualClock();

const UPSERT_BODY = { ...CREATE_BODY, metadata: { email: "ada@example.com" } };

describe("items.upsert", () => {
  it("returns created with the item for a 201, sending a random Idempotency-Key", async () => {
    const keys: string[] = [];
    api().post("/v1/ext/items/upsert", UPSERT_BODY).reply(recordingKey(keys, 201, item("1"), { "Stageline-Upsert": "created", Location: "/v1/ext/items/1" }));
    await expect(client().items.upsert(UPSERT_BODY)).resolves.toEqual({ result: "created", item: item("1") });
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("returns updated or unchanged for a 200, with the caller's key", async () => {
    const keys: string[] = [];
    api()
      .post("/v1/ext/items/upsert")
      .reply(recordingKey(keys, 200, item("1", { version: 2 }), { "Stageline-Upsert": "updated" }))
      .post("/v1/ext/items/upsert")
      .reply(recordingKey(keys, 200, item("1", { version: 2 }), { "Stageline-Upsert": "unchanged" }));
    await expect(client().items.upsert(UPSERT_BODY, { idempotencyKey: "row-1" })).resolves.toMatchObject({ result: "updated", item: { version: 2 } });
    await expect(client().items.upsert(UPSERT_BODY, { idempotencyKey: "row-2" })).resolves.toMatchObject({ result: "unchanged" });
    expect(keys).toEqual(["row-1", "row-2"]);
  });

  it("retries a 5xx with the same key", async () => {
    const keys: string[] = [];
    api()
      .post("/v1/ext/items/upsert")
      .reply(recordingKey(keys, 503, problem(503, "internal")))
      .post("/v1/ext/items/upsert")
      .reply(recordingKey(keys, 201, item("1"), { "Stageline-Upsert": "created" }));
    await expect(client().items.upsert(UPSERT_BODY)).resolves.toMatchObject({ result: "created" });
    expect(keys).toHaveLength(2);
    expect(keys[1]).toBe(keys[0]);
  });

  it("throws ConflictError for 409 ambiguous_match (matches in the problem) and ValidationError for 422 upsert_unavailable", async () => {
    api().post("/v1/ext/items/upsert").reply(409, problem(409, "ambiguous_match", { matches: ["b", "a"] }), { "Content-Type": "application/problem+json" });
    const err = await client().items.upsert(UPSERT_BODY).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConflictError);
    expect(err).toMatchObject({ code: "ambiguous_match", problem: { matches: ["b", "a"] } });
    api().post("/v1/ext/items/upsert").reply(422, problem(422, "upsert_unavailable"), { "Content-Type": "application/problem+json" });
    await expect(client().items.upsert(UPSERT_BODY)).rejects.toBeInstanceOf(ValidationError);
  });

  it("refuses a success without a valid Stageline-Upsert header", async () => {
    api().post("/v1/ext/items/upsert").reply(200, item("1"));
    await expect(client().items.upsert(UPSERT_BODY)).rejects.toThrow(/Stageline-Upsert/);
    api().post("/v1/ext/items/upsert").reply(200, item("1"), { "Stageline-Upsert": "merged" });
    await expect(client().items.upsert(UPSERT_BODY)).rejects.toThrow(/Stageline-Upsert/);
  });
});
