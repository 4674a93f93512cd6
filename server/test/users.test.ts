/**
 * People (issue 30 item 4, CONTRACT "People", "Lists"): GET /v1/ext/users (order, keyset pages, bounds, tenancy),
 * the display name's rules, and `assignee` on every task body (list, get, create, update, events, sample, replay).
 */
import { TaskSchema, UserSchema, type User } from "@stageline/shared";
import { createUser, setDisplayName } from "../src/services/users";
import { CLI_ACTOR } from "../src/services/audit-log";
import { startTestServer, type TestServer } from "./helpers/test-server";

/** The `rel="next"` URL of a Link header, as a path. */
function nextPath(link: string | null): string | null {
  const match = link ? /<([^>]+)>;\s*rel="next"/.exec(link) : null;
  return match ? new URL(match[1]!).pathname + new URL(match[1]!).search : null;
}

describe("people", () => {
  let t: TestServer;
  let seq = 0;
  /** Creates a console user of `companyId` with display name `name` (null: none set) and returns it as the API shows it. */
  const person = async (companyId: string, name: string | null, email = `user${++seq}@people.example`): Promise<User> => {
    const created = await createUser(t.server.ctx.prisma, { company_id: companyId, email, role: "member" }, { actor: CLI_ACTOR });
    if (name !== null) await setDisplayName(t.server.ctx.prisma, companyId, created.id, { name }, { actor: CLI_ACTOR, companyId });
    return { user_id: created.id, name, email };
  };

  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t?.close();
  });

  describe("GET /v1/ext/users", () => {
    let other: { companyId: string; apiKey: string };
    let expected: User[];
    beforeAll(async () => {
      other = await t.newCompany("People Other Co");
      const unnamedLate = await person(t.companyId, null, "zed@people.example");
      const bea = await person(t.companyId, "Bea Smith", "bea@people.example");
      const adaZ = await person(t.companyId, "Ada Lovelace", "z-ada@people.example");
      const unnamedEarly = await person(t.companyId, null, "abe@people.example");
      const adaA = await person(t.companyId, "Ada Lovelace", "a-ada@people.example");
      const carl = await person(t.companyId, "Carl", "carl@people.example");
      await person(other.companyId, "Ada Other", "ada@other.example");
      // By name, users without a name last, then by email.
      expected = [adaA, adaZ, bea, carl, unnamedEarly, unnamedLate];
    });

    it("lists the company's users by name (nulls last), then email, as { user_id, name, email } only", async () => {
      const res = await t.request("GET", "/v1/ext/users", undefined, (await t.newKey(["items:read"])).key);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(expected);
      for (const user of res.body as User[]) expect(UserSchema.strict().parse(user)).toEqual(user);
      expect(res.headers.get("link")).toBeNull();
    });

    it("pages with limit and the Link header's next URL, every user once, in order", async () => {
      const seen: User[] = [];
      let path: string | null = "/v1/ext/users?limit=2";
      let pages = 0;
      while (path) {
        const res = await t.request("GET", path, undefined, t.apiKey);
        expect(res.status).toBe(200);
        expect((res.body as User[]).length).toBeLessThanOrEqual(2);
        seen.push(...(res.body as User[]));
        path = nextPath(res.headers.get("link"));
        pages++;
      }
      expect(seen).toEqual(expected);
      expect(pages).toBe(3);
      // A page boundary between a named user and the unnamed ones, and within the unnamed ones.
      const byFour = await t.request("GET", "/v1/ext/users?limit=4", undefined, t.apiKey);
      expect(byFour.body).toEqual(expected.slice(0, 4));
      const rest = await t.request("GET", nextPath(byFour.headers.get("link"))!, undefined, t.apiKey);
      expect(rest.body).toEqual(expected.slice(4));
      const byFive = await t.request("GET", "/v1/ext/users?limit=5", undefined, t.apiKey);
      const last = await t.request("GET", nextPath(byFive.headers.get("link"))!, undefined, t.apiKey);
      expect(last.body).toEqual(expected.slice(5));
      expect(last.headers.get("link")).toBeNull();
    });

    it("never shows another company's users, and theirs never ours", async () => {
      const res = await t.request("GET", "/v1/ext/users", undefined, other.apiKey);
      expect(res.status).toBe(200);
      expect((res.body as User[]).map((u) => u.email)).toEqual(["ada@other.example"]);
      const ours = await t.request("GET", "/v1/ext/users?limit=500", undefined, t.apiKey);
      expect((ours.body as User[]).some((u) => u.email.endsWith("@other.example"))).toBe(false);
    });

    it.each([
      ["limit=0"],
      ["limit=501"],
      ["limit=abc"],
      ["cursor=not-a-cursor"],
      [`cursor=${Buffer.from(JSON.stringify(["x"])).toString("base64url")}`],
      [`cursor=${Buffer.from(JSON.stringify([5, "a@b"])).toString("base64url")}`],
      [`cursor=${Buffer.from(JSON.stringify(["", "a@b"])).toString("base64url")}`],
      [`cursor=${Buffer.from(JSON.stringify(["a\u0000", "a@b"])).toString("base64url")}`],
    ])("refuses %s with 400 validation_failed", async (query) => {
      const res = await t.request("GET", `/v1/ext/users?${query}`, undefined, t.apiKey);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: "validation_failed" });
    });

    it("needs a valid key", async () => {
      expect((await t.request("GET", "/v1/ext/users", undefined, null)).status).toBe(401);
      expect((await t.request("GET", "/v1/ext/users", undefined, "sk_live_nope")).status).toBe(401);
    });
  });

  describe("display name", () => {
    const set = async (userId: string, name: unknown) =>
      setDisplayName(t.server.ctx.prisma, t.companyId, userId, { name }, { actor: CLI_ACTOR, companyId: t.companyId });

    it("is trimmed, 1..255 characters, without NUL; blank clears it", async () => {
      const user = await person(t.companyId, null);
      expect((await set(user.user_id, "  Grace Hopper \n")).name).toBe("Grace Hopper");
      expect((await set(user.user_id, "x".repeat(255))).name).toBe("x".repeat(255));
      await expect(set(user.user_id, "x".repeat(256))).rejects.toMatchObject({ code: "validation_failed" });
      await expect(set(user.user_id, "Gr\u0000ace")).rejects.toMatchObject({ code: "validation_failed" });
      await expect(set(user.user_id, 42)).rejects.toMatchObject({ code: "validation_failed" });
      expect((await set(user.user_id, "   ")).name).toBeNull();
      const row = await t.server.ctx.prisma.user.findUniqueOrThrow({ where: { id: user.user_id } });
      expect(row.name).toBeNull();
    });

    it("cannot be set on another company's user (404)", async () => {
      const other = await t.newCompany("Name Other Co");
      const stranger = await person(other.companyId, "Stranger");
      await expect(set(stranger.user_id, "Hacked")).rejects.toMatchObject({ code: "not_found" });
      expect((await t.server.ctx.prisma.user.findUniqueOrThrow({ where: { id: stranger.user_id } })).name).toBe("Stranger");
    });
  });

  describe("task assignee", () => {
    let key: string;
    let ada: User;
    let stranger: User;
    beforeAll(async () => {
      key = (await t.newKey(["tasks:read", "tasks:write", "hooks:manage"])).key;
      ada = await person(t.companyId, "Ada Assignee");
      const other = await t.newCompany("Assignee Other Co");
      stranger = await person(other.companyId, "Stranger Assignee");
    });
    const create = async (assignedTo: string, headers: Record<string, string> = {}) => {
      const res = await t.request("POST", "/v1/ext/tasks", { title: "Call", due_at: "2026-03-01T09:30:00Z", assigned_to: assignedTo }, key, headers);
      expect(res.status).toBe(201);
      return res.body as ReturnType<typeof TaskSchema.parse>;
    };
    const eventsOf = async (taskId: string) =>
      (await t.server.ctx.prisma.webhookEvent.findMany({ where: { resourceId: taskId }, orderBy: { seq: "asc" } })).map((e) => e.payload as Record<string, unknown>);

    it("is the company's user whose id is assigned_to on create, get, list and task.created", async () => {
      const task = await create(ada.user_id);
      expect(TaskSchema.strict().parse(task)).toEqual(task);
      expect(task.assignee).toEqual(ada);
      expect((await t.request("GET", `/v1/ext/tasks/${task.task_id}`, undefined, key)).body).toEqual(task);
      const listed = await t.request("GET", `/v1/ext/tasks?assigned_to=${ada.user_id}`, undefined, key);
      expect(listed.body).toEqual([task]);
      expect(await eventsOf(task.task_id)).toEqual([task]);
    });

    it("is null for a free identifier and for another company's user id (assigned_to kept as given)", async () => {
      const free = await create("sales-team");
      expect(free).toMatchObject({ assigned_to: "sales-team", assignee: null });
      const foreign = await create(stranger.user_id);
      expect(foreign).toMatchObject({ assigned_to: stranger.user_id, assignee: null });
      expect((await t.request("GET", `/v1/ext/tasks/${foreign.task_id}`, undefined, key)).body).toMatchObject({ assignee: null });
    });

    it("follows assigned_to on update and in task.updated / task.completed; previous keeps only assigned_to", async () => {
      const task = await create("nobody-yet");
      const assigned = await t.request("PATCH", `/v1/ext/tasks/${task.task_id}`, { assigned_to: ada.user_id }, key);
      expect(assigned.status).toBe(200);
      expect(assigned.body).toMatchObject({ assigned_to: ada.user_id, assignee: ada });
      const completed = await t.request("PATCH", `/v1/ext/tasks/${task.task_id}`, { is_completed: true }, key);
      expect(completed.body).toMatchObject({ assignee: ada, is_completed: true });
      const unassigned = await t.request("PATCH", `/v1/ext/tasks/${task.task_id}`, { assigned_to: "someone-else" }, key);
      expect(unassigned.body).toMatchObject({ assigned_to: "someone-else", assignee: null });
      const unchanged = await t.request("PATCH", `/v1/ext/tasks/${task.task_id}`, { assigned_to: "someone-else" }, key);
      expect(unchanged.body).toEqual(unassigned.body);
      const events = await eventsOf(task.task_id);
      expect(events).toEqual([
        task,
        { ...assigned.body, changed_fields: ["assigned_to"], previous: { assigned_to: "nobody-yet" } },
        { ...completed.body, changed_fields: ["is_completed", "completed_at"], previous: { is_completed: false, completed_at: null } },
        { ...completed.body, changed_fields: ["is_completed", "completed_at"], previous: { is_completed: false, completed_at: null } },
        { ...unassigned.body, changed_fields: ["assigned_to"], previous: { assigned_to: ada.user_id } },
      ]);
    });

    it("shows the current display name, looked up once per list page", async () => {
      const renamed = await person(t.companyId, "Before Rename");
      const task = await create(renamed.user_id);
      await setDisplayName(t.server.ctx.prisma, t.companyId, renamed.user_id, { name: "After Rename" }, { actor: CLI_ACTOR, companyId: t.companyId });
      const res = await t.request("GET", `/v1/ext/tasks/${task.task_id}`, undefined, key);
      expect(res.body).toMatchObject({ assignee: { ...renamed, name: "After Rename" } });
      // Many tasks of mixed assignees on one page: each gets its own.
      for (let i = 0; i < 3; i++) await create(i % 2 ? ada.user_id : `free-${i}`);
      const page = await t.request("GET", "/v1/ext/tasks?limit=4", undefined, key);
      for (const listed of page.body as { assigned_to: string; assignee: User | null }[]) {
        expect(listed.assignee).toEqual(listed.assigned_to === ada.user_id ? ada : listed.assigned_to === renamed.user_id ? { ...renamed, name: "After Rename" } : null);
      }
    });

    it("is in the idempotent replay of a create", async () => {
      const headers = { "idempotency-key": `assignee-replay-${Date.now()}` };
      const first = await create(ada.user_id, headers);
      const replay = await t.request("POST", "/v1/ext/tasks", { title: "Call", due_at: "2026-03-01T09:30:00Z", assigned_to: ada.user_id }, key, headers);
      expect(replay.status).toBe(201);
      expect(replay.body).toEqual(first);
      expect(first.assignee).toEqual(ada);
    });

    it("is in the task.updated of a task that deleting its item unlinks", async () => {
      const writer = (await t.newKey(["items:write", "tasks:read", "tasks:write"])).key;
      const item = await t.request("POST", "/v1/ext/items", { name: "Doomed deal", pipeline_id: t.pipeline.id, stage_id: t.pipeline.stages[0]!.id }, writer);
      expect(item.status).toBe(201);
      const task = await t.request("POST", "/v1/ext/tasks", { title: "Call", due_at: "2026-03-01T09:30:00Z", assigned_to: ada.user_id, item_id: item.body.item_id }, writer);
      expect((await t.request("DELETE", `/v1/ext/items/${item.body.item_id}`, undefined, writer)).status).toBe(204);
      const events = await eventsOf(task.body.task_id);
      expect(events[1]).toMatchObject({ item_id: null, assignee: ada, changed_fields: ["item_id"], previous: { item_id: item.body.item_id } });
      expect((await t.request("GET", `/v1/ext/tasks/${task.body.task_id}`, undefined, writer)).body).toMatchObject({ item_id: null, assignee: ada });
    });

    it("is in the task sample, matching its assigned_to", async () => {
      const res = await t.request("GET", "/v1/ext/webhooks/sample/tasks", undefined, key);
      expect(res.status).toBe(200);
      expect(TaskSchema.strict().parse(res.body)).toEqual(res.body);
      expect(res.body.assignee).toMatchObject({ user_id: res.body.assigned_to });
      const updated = await t.request("GET", "/v1/ext/webhooks/sample/tasks?event=task.updated", undefined, key);
      expect(updated.body.assignee).toEqual(res.body.assignee);
    });
  });
});
