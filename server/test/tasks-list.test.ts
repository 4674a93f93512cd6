import { startTestServer, type TestServer } from "./helpers/test-server";

type TaskBody = { task_id: string; created_at: string; [key: string]: unknown };

/** Newest first: created_at desc, then task_id desc (CONTRACT "Lists"). */
function newestFirst(tasks: TaskBody[]): string[] {
  return [...tasks]
    .sort((a, b) => b.created_at.localeCompare(a.created_at) || (b.task_id < a.task_id ? -1 : b.task_id > a.task_id ? 1 : 0))
    .map((task) => task.task_id);
}

/** The path + query of a `Link: <url>; rel="next"` header, or null. */
function nextPath(link: string | null): string | null {
  const match = link?.match(/<([^>]+)>;\s*rel="next"/);
  if (!match) return null;
  const url = new URL(match[1]!);
  return url.pathname + url.search;
}

describe("listing tasks", () => {
  let t: TestServer;
  let company: Awaited<ReturnType<TestServer["newCompany"]>>;
  const created: Record<string, TaskBody> = {};
  let itemId: string;

  const create = async (name: string, body: Record<string, unknown>) => {
    const res = await t.request("POST", "/v1/ext/tasks", { title: name, due_at: "2026-03-01T09:00:00Z", assigned_to: "ada", ...body }, company.apiKey);
    expect(res.status).toBe(201);
    created[name] = res.body;
  };
  const list = async (query = "") => t.request("GET", `/v1/ext/tasks${query}`, undefined, company.apiKey);
  const titles = (body: TaskBody[]) => body.map((task) => task.title).sort();

  beforeAll(async () => {
    t = await startTestServer();
    company = await t.newCompany("Listing Co");
    const stage = company.pipeline.stages[0]!;
    itemId = (
      await t.server.ctx.prisma.item.create({
        data: { companyId: company.companyId, pipelineId: company.pipeline.id, stageId: stage.id, statusId: stage.statuses[0]!.id, shortId: "SALES-1", name: "Deal" },
      })
    ).id;
    await create("january", { due_at: "2026-01-01T09:00:00Z" });
    await create("february", { due_at: "2026-02-01T09:00:00Z", assigned_to: "grace" });
    await create("march-done", { due_at: "2026-03-01T09:00:00Z", is_completed: true });
    await create("linked", { due_at: "2026-04-01T09:00:00Z", item_id: itemId, assigned_to: "grace" });
    await create("linked-done", { due_at: "2026-05-01T09:00:00Z", item_id: itemId, is_completed: true });
    // noise in the main company, which must never show up here
    await t.request("POST", "/v1/ext/tasks", { title: "other company", due_at: "2026-03-01T09:00:00Z", assigned_to: "ada" });
  });
  afterAll(async () => {
    await t?.close();
  });

  it("returns the company's tasks as a JSON array, newest first", async () => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.body.map((task: TaskBody) => task.task_id)).toEqual(newestFirst(Object.values(created)));
  });

  it("shows each task in the same format as reading it alone", async () => {
    const res = await list();
    for (const task of res.body) expect(task).toEqual(created[task.title]);
  });

  it("filters by item_id", async () => {
    expect(titles((await list(`?item_id=${itemId}`)).body)).toEqual(["linked", "linked-done"]);
  });

  it("filters by is_completed", async () => {
    expect(titles((await list("?is_completed=true")).body)).toEqual(["linked-done", "march-done"]);
    expect(titles((await list("?is_completed=false")).body)).toEqual(["february", "january", "linked"]);
  });

  it("filters by assigned_to", async () => {
    expect(titles((await list("?assigned_to=grace")).body)).toEqual(["february", "linked"]);
  });

  it("filters by due_before and due_after, each excluding the boundary", async () => {
    expect(titles((await list("?due_before=2026-03-01T09:00:00Z")).body)).toEqual(["february", "january"]);
    expect(titles((await list("?due_after=2026-03-01T09:00:00Z")).body)).toEqual(["linked", "linked-done"]);
    expect(titles((await list("?due_after=2026-01-15T00:00:00Z&due_before=2026-03-15T00:00:00Z")).body)).toEqual(["february", "march-done"]);
  });

  it("combines filters", async () => {
    expect(titles((await list(`?item_id=${itemId}&is_completed=false&assigned_to=grace`)).body)).toEqual(["linked"]);
  });

  it("treats empty filter values as absent", async () => {
    expect((await list("?item_id=&assigned_to=")).body).toHaveLength(5);
  });

  it("rejects a malformed filter as 400 naming it", async () => {
    const res = await list("?is_completed=yes&due_before=soon");
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(["due_before", "is_completed"]);
  });

  it("pages with limit and a Link to the next page until every task was returned once", async () => {
    const seen: string[] = [];
    let path: string | null = "/v1/ext/tasks?limit=2";
    let pages = 0;
    while (path) {
      const res = await t.request("GET", path, undefined, company.apiKey);
      expect(res.status).toBe(200);
      expect(res.body.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.map((task: TaskBody) => task.task_id));
      path = nextPath(res.headers.get("link"));
      pages += 1;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual(newestFirst(Object.values(created)));
  });

  it("keeps filters on the next page's link", async () => {
    const first = await list("?is_completed=false&limit=2");
    const next = nextPath(first.headers.get("link"));
    expect(next).toContain("is_completed=false");
    const second = await t.request("GET", next!, undefined, company.apiKey);
    expect(titles([...first.body, ...second.body])).toEqual(["february", "january", "linked"]);
    expect(second.headers.get("link")).toBeNull();
  });

  it("sends no Link header when everything fits on one page", async () => {
    const res = await list();
    expect(res.headers.get("link")).toBeNull();
  });

  it("rejects a cursor it did not issue as 400", async () => {
    const res = await list("?cursor=not-a-cursor");
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("validation_failed");
  });

  it("rejects a limit above 500 as 400", async () => {
    const res = await list("?limit=501");
    expect(res.status).toBe(400);
  });
});
