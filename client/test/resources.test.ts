/**
 * CONTRACT "Client library": the surface (paths, queries, bodies), paging through `Link: rel="next"`, and the
 * mapping of problem details to error classes.
 */
import {
  AuthenticationError,
  ConflictError,
  InvalidResponseError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  ServerError,
  Stageline,
  StagelineError,
  ValidationError,
} from "../src";
import { api, client, CREATE_BODY, item, ORIGIN, problem, useNock, useVirtualClock } from "./helpers/setup";

useNock();
useVirtualClock();

const next = (cursor: string, extra = "") => ({ Link: `<${ORIGIN}/v1/ext/items?limit=2${extra}&cursor=${cursor}>; rel="next"` });

describe("paging", () => {
  it("list returns one page and the cursor of its Link rel=next URL", async () => {
    api().get("/v1/ext/items").query({ pipeline_id: "p1", limit: "2" }).reply(200, [item("1"), item("2")], next("abc%3D%3D"));
    const page = await client().items.list({ pipeline_id: "p1", limit: 2 });
    expect(page).toEqual({ data: [item("1"), item("2")], nextCursor: "abc==" });
  });

  it("the last page has nextCursor null", async () => {
    api().get("/v1/ext/tasks").query({ cursor: "c2" }).reply(200, [{ task_id: "t9" }]);
    await expect(client().tasks.list({ cursor: "c2" })).resolves.toEqual({ data: [{ task_id: "t9" }], nextCursor: null });
  });

  it("iterate yields every record across pages, fetching a page only when reached", async () => {
    const first = api().get("/v1/ext/items").query({ limit: "2" }).reply(200, [item("1"), item("2")], next("c2"));
    const second = api().get("/v1/ext/items").query({ limit: "2", cursor: "c2" }).reply(200, [item("3")]);
    const it = client().items.iterate({ limit: 2 });
    expect(first.isDone()).toBe(false);
    expect((await it.next()).value).toEqual(item("1"));
    expect((await it.next()).value).toEqual(item("2"));
    expect(second.isDone()).toBe(false);
    expect((await it.next()).value).toEqual(item("3"));
    expect(await it.next()).toEqual({ done: true, value: undefined });
  });

  it("iterate over webhooks and find by short ID", async () => {
    api().get("/v1/ext/webhooks").reply(200, [{ id: "w1" }], { Link: `<${ORIGIN}/v1/ext/webhooks?cursor=n>; rel="next"` });
    api().get("/v1/ext/webhooks").query({ cursor: "n" }).reply(200, [{ id: "w2" }]);
    const ids: string[] = [];
    for await (const w of client().webhooks.iterate()) ids.push(w.id);
    expect(ids).toEqual(["w1", "w2"]);
    api().get("/v1/ext/items").query({ short_id: "SALES-1" }).reply(200, [item("1")]);
    await expect(client().items.find({ shortId: "SALES-1" })).resolves.toEqual([item("1")]);
    api().get("/v1/ext/items").query({ name: "Acme" }).reply(200, []);
    await expect(client().items.find({ name: "Acme" })).resolves.toEqual([]);
  });
});

describe("the rest of the surface", () => {
  it("pipelines, stages, statuses and me", async () => {
    api()
      .get("/v1/ext/pipelines")
      .reply(200, [{ id: "p1", name: "Sales" }])
      .get("/v1/ext/pipelines/p1/stages")
      .reply(200, [{ id: "s1", name: "Lead" }])
      .get("/v1/ext/pipelines/p1/stages/s1/statuses")
      .reply(200, [{ id: "st1", name: "Open" }])
      .get("/v1/ext/me")
      .reply(200, { company: { id: "c1", name: "Acme" } });
    const c = client();
    expect(await c.pipelines.list()).toEqual([{ id: "p1", name: "Sales" }]);
    expect(await c.pipelines.stages("p1")).toEqual([{ id: "s1", name: "Lead" }]);
    expect(await c.pipelines.statuses("p1", "s1")).toEqual([{ id: "st1", name: "Open" }]);
    expect(await c.me()).toEqual({ company: { id: "c1", name: "Acme" } });
  });

  it("path ids are encoded, update sends the body, complete sets is_completed", async () => {
    api().patch("/v1/ext/items/a%2Fb", { name: "New" }).reply(200, item("a/b")).patch("/v1/ext/tasks/t1", { is_completed: true }).reply(200, { task_id: "t1", is_completed: true });
    const c = client();
    await expect(c.items.update("a/b", { name: "New" })).resolves.toMatchObject({ item_id: "a/b" });
    await expect(c.tasks.complete("t1")).resolves.toMatchObject({ is_completed: true });
  });

  it("webhooks: sample, deliveries page, redeliver, rotate, unsubscribe (204)", async () => {
    api()
      .get("/v1/ext/webhooks/sample/items")
      .reply(200, item("s"))
      .get("/v1/ext/webhooks/sample/tasks")
      .reply(200, { task_id: "t" })
      .get("/v1/ext/webhooks/w1/deliveries")
      .query({ state: "failed" })
      .reply(200, [{ id: "d1" }])
      .post("/v1/ext/webhooks/w1/deliveries/d1/redeliver")
      .reply(202, { id: "d1", state: "pending" })
      .post("/v1/ext/webhooks/w1/rotate-secret")
      .reply(200, { id: "w1", secret: "whsec_new" })
      .delete("/v1/ext/webhooks/w1")
      .reply(204);
    const c = client();
    expect(await c.webhooks.sample()).toEqual(item("s"));
    expect(await c.webhooks.sample("tasks")).toEqual({ task_id: "t" });
    expect(await c.webhooks.deliveries("w1", { state: "failed" })).toEqual({ data: [{ id: "d1" }], nextCursor: null });
    expect(await c.webhooks.redeliver("w1", "d1")).toEqual({ id: "d1", state: "pending" });
    expect(await c.webhooks.rotateSecret("w1")).toEqual({ id: "w1", secret: "whsec_new" });
    await expect(c.webhooks.unsubscribe("w1")).resolves.toBeUndefined();
  });

  it("items.delete: DELETE with the version as a query parameter only when given, resolves void on 204, sent once on 503", async () => {
    api().delete("/v1/ext/items/a%2Fb").query({ version: "3" }).reply(204).delete("/v1/ext/items/i2").reply(204).delete("/v1/ext/items/i3").once().reply(503);
    const c = client();
    await expect(c.items.delete("a/b", { version: 3 })).resolves.toBeUndefined();
    await expect(c.items.delete("i2")).resolves.toBeUndefined();
    await expect(c.items.delete("i3")).rejects.toMatchObject({ status: 503 }); // a second attempt would hit no interceptor
  });

  it("baseUrl may end with a slash; the client adds /v1/ext", async () => {
    api().get("/v1/ext/pipelines").reply(200, []);
    await expect(client({ baseUrl: `${ORIGIN}/` }).pipelines.list()).resolves.toEqual([]);
  });

  it("refuses missing apiKey, a baseUrl that is not http(s), and numbers out of range", () => {
    expect(() => new Stageline({ apiKey: "", baseUrl: ORIGIN })).toThrow(TypeError);
    expect(() => new Stageline({ apiKey: "k", baseUrl: "stageline.example.com" })).toThrow(TypeError);
    for (const bad of [{ maxRetries: -1 }, { maxRetries: 1.5 }, { maxRetries: Infinity }, { timeoutMs: 0 }, { timeoutMs: -5 }, { timeoutMs: Infinity }, { timeoutMs: NaN }, { timeoutMs: 2 ** 31 }, { maxRateLimitWaitMs: -1 }]) {
      expect(() => new Stageline({ apiKey: "k", baseUrl: ORIGIN, ...bad })).toThrow(TypeError);
    }
    expect(() => new Stageline({ apiKey: "k", baseUrl: ORIGIN, maxRetries: 0, timeoutMs: 1, maxRateLimitWaitMs: 0 })).not.toThrow();
  });

  it("an empty or blank id rejects with TypeError and sends nothing (it would address the list)", async () => {
    const c = client();
    const calls: [string, () => Promise<unknown>][] = [
      ["items.get", () => c.items.get("")],
      ["items.update", () => c.items.update("  ", { name: "x" })],
      ["items.delete", () => c.items.delete(" ")],
      ["tasks.get", () => c.tasks.get("")],
      ["tasks.update", () => c.tasks.update("", { title: "x" })],
      ["tasks.complete", () => c.tasks.complete(" ")],
      ["pipelines.stages", () => c.pipelines.stages("")],
      ["pipelines.statuses", () => c.pipelines.statuses("p1", "")],
      ["webhooks.unsubscribe", () => c.webhooks.unsubscribe("")],
      ["webhooks.deliveries", () => c.webhooks.deliveries("\t")],
      ["webhooks.redeliver", () => c.webhooks.redeliver("w1", "")],
      ["webhooks.rotateSecret", () => c.webhooks.rotateSecret("")],
    ];
    for (const [name, call] of calls) await expect(call()).rejects.toThrow(TypeError);
    expect(calls).toHaveLength(12); // no nock interceptor: anything sent would fail with a nock error instead
  });

  it("items.find with an empty or blank short ID or name rejects with TypeError instead of listing every item", async () => {
    const c = client();
    await expect(c.items.find({ shortId: "" })).rejects.toThrow(TypeError);
    await expect(c.items.find({ name: "  " })).rejects.toThrow(TypeError);
    await expect(c.items.find({} as { name: string })).rejects.toThrow(TypeError);
  });
});

describe("errors carry the problem details, one class per kind", () => {
  it.each([
    [400, "validation_failed", ValidationError],
    [401, "invalid_api_key", AuthenticationError],
    [402, "subscription_inactive", PermissionError],
    [403, "insufficient_scope", PermissionError],
    [404, "not_found", NotFoundError],
    [409, "version_conflict", ConflictError],
    [422, "invalid_reference", ValidationError],
    [500, "internal", ServerError],
  ])("%i %s", async (status, code, type) => {
    api().patch("/v1/ext/items/i1").reply(status, problem(status, code), { "Content-Type": "application/problem+json" });
    const err = await client()
      .items.update("i1", { name: "x" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(type);
    expect(err).toBeInstanceOf(StagelineError);
    expect(err).toMatchObject({ status, code, title: code.replace(/_/g, " "), detail: `detail of ${code}` });
  });

  it("validation errors list every failing field; a version conflict carries currentVersion", async () => {
    api()
      .post("/v1/ext/items")
      .reply(400, problem(400, "validation_failed", { errors: [{ path: "name", message: "Required" }] }))
      .patch("/v1/ext/items/i1")
      .reply(409, problem(409, "version_conflict", { current_version: 4 }));
    const c = client();
    await expect(c.items.create(CREATE_BODY)).rejects.toMatchObject({ errors: [{ path: "name", message: "Required" }], currentVersion: undefined });
    await expect(c.items.update("i1", { name: "x", version: 3 })).rejects.toMatchObject({ code: "version_conflict", currentVersion: 4 });
  });

  it("a 2xx whose body is not JSON is an InvalidResponseError (a StagelineError), not a raw SyntaxError", async () => {
    api().get("/v1/ext/items/i1").reply(200, "<html>proxy login</html>", { "Content-Type": "text/html" });
    const err = await client()
      .items.get("i1")
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect(err).toBeInstanceOf(StagelineError);
    expect(err).toMatchObject({ status: 200, code: "invalid_response" });
    expect((err as Error).cause).toBeInstanceOf(SyntaxError);
  });

  it("a 429 beyond the budget is a RateLimitError; a body that is not a problem still gives the status", async () => {
    api().get("/v1/ext/me").reply(429, problem(429, "rate_limited"), { "Retry-After": "5" }).get("/v1/ext/items/x").reply(404, "<html>nope</html>");
    const c = client({ maxRateLimitWaitMs: 1000 });
    await expect(c.me()).rejects.toBeInstanceOf(RateLimitError);
    await expect(c.items.get("x")).rejects.toMatchObject({ name: "NotFoundError", status: 404, code: "unknown", title: "HTTP 404" });
  });
});
