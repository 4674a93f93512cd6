/**
 * CONTRACT "Client library" + "People": `users.list` / `users.iterate` (GET /v1/ext/users, keyset pages through
 * `Link: rel="next"`), and a task's `assignee` as the typed record.
 */
import type { Task, User } from "../src";
import { api, client, ORIGIN, problem, useNock, useVirtualClock } from "./helpers/setup";

useNock();
useVirtualClock();

const user = (n: string, name: string | null = `User ${n}`): User => ({ user_id: `u${n}`, name, email: `u${n}@acme.example` });

describe("users", () => {
  it("list returns one page with the cursor of its Link rel=next URL; the last page has nextCursor null", async () => {
    api()
      .get("/v1/ext/users")
      .query({ limit: "2" })
      .reply(200, [user("1"), user("2", null)], { Link: `<${ORIGIN}/v1/ext/users?limit=2&cursor=u%3D2>; rel="next"` });
    await expect(client().users.list({ limit: 2 })).resolves.toEqual({ data: [user("1"), user("2", null)], nextCursor: "u=2" });
    api().get("/v1/ext/users").query({ limit: "2", cursor: "u=2" }).reply(200, [user("3")]);
    await expect(client().users.list({ limit: 2, cursor: "u=2" })).resolves.toEqual({ data: [user("3")], nextCursor: null });
    api().get("/v1/ext/users").reply(200, []);
    await expect(client().users.list()).resolves.toEqual({ data: [], nextCursor: null });
  });

  it("iterate yields every user across pages, fetching a page only when reached", async () => {
    const first = api()
      .get("/v1/ext/users")
      .reply(200, [user("1")], { Link: `<${ORIGIN}/v1/ext/users?cursor=c2>; rel="next"` });
    const second = api().get("/v1/ext/users").query({ cursor: "c2" }).reply(200, [user("2")]);
    const it = client().users.iterate();
    expect(first.isDone()).toBe(false);
    expect((await it.next()).value).toEqual(user("1"));
    expect(second.isDone()).toBe(false);
    expect((await it.next()).value).toEqual(user("2"));
    expect(await it.next()).toEqual({ done: true, value: undefined });
  });

  it("a read is retried after a 5xx and a bad key is an AuthenticationError", async () => {
    api().get("/v1/ext/users").reply(503, problem(503, "internal"), { "content-type": "application/problem+json" });
    api().get("/v1/ext/users").reply(200, [user("1")]);
    await expect(client().users.list()).resolves.toEqual({ data: [user("1")], nextCursor: null });
    api().get("/v1/ext/users").reply(401, problem(401, "invalid_api_key"), { "content-type": "application/problem+json" });
    await expect(client().users.list()).rejects.toMatchObject({ name: "AuthenticationError", status: 401 });
  });

  it("a task's assignee is the user record, or null", () => {
    const assignee: Task["assignee"] = user("1");
    const none: Task["assignee"] = null;
    expect([assignee, none]).toEqual([user("1"), null]);
  });
});
