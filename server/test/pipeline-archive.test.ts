/**
 * Issue 19, the way out for a bad pipeline (CONTRACT "Pipelines, blueprints, transitions"): archive and restore by
 * owners and admins (console, with a confirmation page, CSRF and an audit log entry) and by the admin CLI / admin
 * API. An archived pipeline is not listed by GET /v1/ext/pipelines; its stages, statuses and fields stay readable by
 * id; its items stay readable and updatable; creating an item in it is 422 `pipeline_archived`. Members get 403;
 * another company's pipeline id is 404.
 */
import { ProblemSchema } from "@stageline/shared";
import { PipelineArchiveStateSchema } from "../src/admin/admin-api";
import { consoleOverHttp, createConsoleUser, signInOverHttp } from "./helpers/console-browser";
import { useCliServer } from "./helpers/cli-server";
import { createSalesPipeline, startTestServer, type TestPipeline, type TestServer } from "./helpers/test-server";

jest.setTimeout(120_000);

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t?.close();
});

async function adminPost(path: string) {
  const res = await fetch(`${t.url}/admin${path}`, { method: "POST", headers: { "x-admin-token": t.server.ctx.adminToken } });
  return { status: res.status, body: (await res.json()) as unknown };
}

const listedNames = async () => ((await t.request("GET", "/v1/ext/pipelines")).body as { name: string }[]).map((p) => p.name);

const auditOf = (pipelineId: string) =>
  t.server.ctx.prisma.auditEvent.findMany({ where: { targetId: pipelineId }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });

describe("the API with an archived pipeline (archived through the admin API)", () => {
  let p: TestPipeline;
  let item: { item_id: string; version: number };

  beforeAll(async () => {
    p = await createSalesPipeline(t.server, t.companyId, "Archivable");
    const created = await t.request("POST", "/v1/ext/items", { name: "Before", pipeline_id: p.id, stage_id: p.stages[0]!.id });
    expect(created.status).toBe(201);
    item = created.body;
    const res = await adminPost(`/pipelines/${p.id}/archive`);
    expect(res.status).toBe(200);
    expect(PipelineArchiveStateSchema.parse(res.body)).toMatchObject({ id: p.id, name: "Archivable", company_id: t.companyId, archived_at: expect.any(String) });
  });

  it("is not listed by GET /v1/ext/pipelines", async () => {
    expect(await listedNames()).toEqual(["Sales"]);
  });

  it("keeps its stages, statuses and fields readable by id", async () => {
    const stages = await t.request("GET", `/v1/ext/pipelines/${p.id}/stages`);
    expect(stages.body.map((s: { name: string }) => s.name)).toEqual(["Lead", "Qualified", "Proposal", "Closed"]);
    expect((await t.request("GET", `/v1/ext/pipelines/${p.id}/stages/${p.stages[0]!.id}/statuses`)).body).toHaveLength(3);
    expect((await t.request("GET", `/v1/ext/pipelines/${p.id}/fields`)).status).toBe(200);
  });

  it("keeps its items readable and updatable (a stage move within it included)", async () => {
    expect((await t.request("GET", `/v1/ext/items/${item.item_id}`)).status).toBe(200);
    const moved = await t.request("PATCH", `/v1/ext/items/${item.item_id}`, { stage_id: p.stages[1]!.id, name: "After", version: item.version });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ name: "After", stage: "Qualified", version: 2 });
  });

  it("refuses a new item with 422 pipeline_archived, with or without an Idempotency-Key, and stores nothing", async () => {
    const before = await t.server.ctx.prisma.item.count({ where: { pipelineId: p.id } });
    const body = { name: "New", pipeline_id: p.id, stage_id: p.stages[0]!.id };
    for (const headers of [{}, { "Idempotency-Key": "archived-create-1" }] as Record<string, string>[]) {
      const res = await t.request("POST", "/v1/ext/items", body, undefined, headers);
      expect(res.status).toBe(422);
      expect(ProblemSchema.parse(res.body)).toMatchObject({ code: "pipeline_archived", detail: expect.stringContaining('Pipeline "Archivable" is archived') });
    }
    expect(await t.server.ctx.prisma.item.count({ where: { pipelineId: p.id } })).toBe(before);
  });

  it("after a restore it is listed again and takes new items; both changes are in the audit log as cli", async () => {
    const res = await adminPost(`/pipelines/${p.id}/restore`);
    expect(PipelineArchiveStateSchema.parse(res.body).archived_at).toBeNull();
    expect(await listedNames()).toEqual(["Archivable", "Sales"]);
    expect((await t.request("POST", "/v1/ext/items", { name: "New", pipeline_id: p.id, stage_id: p.stages[0]!.id })).status).toBe(201);
    const events = await auditOf(p.id);
    expect(events.map((e) => [e.action, e.actorType])).toEqual([
      ["pipeline.archived", "cli"],
      ["pipeline.restored", "cli"],
    ]);
  });

  it("archiving twice keeps the first time and records one more entry only; an unknown id is 404", async () => {
    const first = PipelineArchiveStateSchema.parse((await adminPost(`/pipelines/${p.id}/archive`)).body);
    const second = PipelineArchiveStateSchema.parse((await adminPost(`/pipelines/${p.id}/archive`)).body);
    expect(second.archived_at).toBe(first.archived_at);
    expect((await auditOf(p.id)).filter((e) => e.action === "pipeline.archived")).toHaveLength(2); // this test's and the first
    const missing = await adminPost("/pipelines/01900000-0000-7000-8000-000000000000/archive");
    expect(missing.status).toBe(404);
    await adminPost(`/pipelines/${p.id}/restore`);
  });
});

describe("the console", () => {
  it("an admin archives after a confirmation page (audit: the user), sees it marked, and restores it", async () => {
    const p = await createSalesPipeline(t.server, t.companyId, "Console one");
    const admin = await createConsoleUser(t, "admin");
    const http = await consoleOverHttp(t.url, admin);
    const page = await http.get(`/console/pipelines/${p.id}`);
    expect(page.text).toContain(`href="/console/pipelines/${p.id}/archive">Archive pipeline</a>`);
    const confirm = await http.get(`/console/pipelines/${p.id}/archive`);
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain('<h1>Archive pipeline &quot;Console one&quot;?</h1>');
    const done = await http.post(`/console/pipelines/${p.id}/archive`, new URLSearchParams());
    expect(done.status).toBe(303);
    expect(done.location).toBe(`/console/pipelines/${p.id}`);
    expect((await http.get(`/console/pipelines/${p.id}`)).text).toContain("Pipeline &quot;Console one&quot; archived.");
    expect((await http.get("/console/pipelines")).text).toMatch(/Console one<\/a><\/td>(\s*<td>[^<]*(<code>[^<]*<\/code>)?<\/td>){3}\s*<td>Archived<\/td>/);
    expect(await listedNames()).not.toContain("Console one");
    const [event] = await auditOf(p.id);
    expect(event).toMatchObject({ action: "pipeline.archived", actorType: "user", actorId: admin.id });

    const restored = await http.post(`/console/pipelines/${p.id}/restore`, new URLSearchParams(), `/console/pipelines/${p.id}/restore`);
    expect(restored.status).toBe(303);
    expect(await listedNames()).toContain("Console one");
  });

  it("refuses a signed-in POST without the CSRF token (403) and changes nothing", async () => {
    const p = await createSalesPipeline(t.server, t.companyId, "Csrf");
    const owner = await createConsoleUser(t, "owner");
    const { cookie } = await signInOverHttp(t.url, owner.email, owner.password);
    const res = await fetch(`${t.url}/console/pipelines/${p.id}/archive`, {
      method: "POST",
      headers: { cookie: cookie!, origin: t.url, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: "forged" }),
      redirect: "manual",
    });
    expect(res.status).toBe(403);
    expect(await listedNames()).toContain("Csrf");
    expect(await auditOf(p.id)).toEqual([]);
  });

  it("gives a member 403 on the confirmation page and the POST, and shows no button", async () => {
    const p = await createSalesPipeline(t.server, t.companyId, "Member view");
    const member = await createConsoleUser(t, "member");
    const http = await consoleOverHttp(t.url, member);
    expect((await http.get(`/console/pipelines/${p.id}`)).text).not.toContain("Archive pipeline");
    expect((await http.get(`/console/pipelines/${p.id}/archive`)).status).toBe(403);
    expect((await http.post(`/console/pipelines/${p.id}/archive`, new URLSearchParams(), "/console/pipelines")).status).toBe(403);
    expect(await listedNames()).toContain("Member view");
  });

  it("answers 404 for another company's pipeline and leaves it alone", async () => {
    const other = await t.newCompany("Other Co");
    const admin = await createConsoleUser(t, "admin");
    const http = await consoleOverHttp(t.url, admin);
    expect((await http.get(`/console/pipelines/${other.pipeline.id}/archive`)).status).toBe(404);
    expect((await http.post(`/console/pipelines/${other.pipeline.id}/archive`, new URLSearchParams(), "/console/pipelines")).status).toBe(404);
    const row = await t.server.ctx.prisma.pipeline.findUniqueOrThrow({ where: { id: other.pipeline.id } });
    expect(row.archivedAt).toBeNull();
  });
});

describe("admin CLI pipelines archive | restore", () => {
  const cli = useCliServer();

  it("archives and restores by pipeline id, prints the state, and exits 1 for an unknown id", async () => {
    const companyId = (await cli.server.ctx.prisma.company.create({ data: { name: "Acme" } })).id;
    const p = await createSalesPipeline(cli.server, companyId, "Cli");
    const archived = await cli.run(["pipelines", "archive", p.id, "--json"]);
    expect(archived.code).toBe(0);
    expect(PipelineArchiveStateSchema.parse(JSON.parse(archived.stdout))).toMatchObject({ id: p.id, company_id: companyId, archived_at: expect.any(String) });
    expect((await cli.server.ctx.prisma.pipeline.findUniqueOrThrow({ where: { id: p.id } })).archivedAt).not.toBeNull();
    const restored = await cli.run(["pipelines", "restore", p.id]);
    expect(restored.code).toBe(0);
    expect(restored.stdout).toBe(`Pipeline Cli (id ${p.id}) is active.\n`);
    const missing = await cli.run(["pipelines", "archive", "01900000-0000-7000-8000-000000000000"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("Pipeline 01900000-0000-7000-8000-000000000000 was not found.");
  });
});
