/**
 * Issue 19, item 1: blueprint limits (CONTRACT "Pipelines, blueprints, transitions": 50 stages, 20 statuses per
 * stage, 100 custom fields, 100 options per select field, 64 KB of blueprint JSON; beyond them `422
 * validation_failed` naming the limit, in the admin API, the console and the admin CLI alike), and reading a
 * pipeline stored before the limits with a huge blueprint: the structure query returns its blueprint once, not on
 * every stage x status row, and the lists never load a blueprint.
 */
import fs from "node:fs";
import path from "node:path";
import { BLUEPRINT_LIMITS, ProblemSchema, blueprintJsonBytes, blueprintLimitErrors } from "@stageline/shared";
import { registerSqlRunner, sqlOf, type SqlRunner } from "../src/db/sql";
import { loadPipelineStructure } from "../src/db/pipelines";
import { consoleOverHttp, createConsoleUser } from "./helpers/console-browser";
import { useCliServer } from "./helpers/cli-server";
import { startTestServer, type TestServer } from "./helpers/test-server";

jest.setTimeout(120_000);

/** The file: 5,000 stages of 3 statuses and 5,000 custom fields (about 436 KB of JSON). */
function attackerBlueprint() {
  return {
    name: "Huge",
    stages: Array.from({ length: 5000 }, (_, i) => ({ name: `Stage ${i}`, statuses: ["Open", "Won", "Lost"] })),
    custom_fields: Array.from({ length: 5000 }, (_, i) => ({ key: `field_${i}`, label: `Field number ${i}`, type: "text" })),
  };
}

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t?.close();
});

async function adminImport(companyId: string, body: unknown) {
  const res = await fetch(`${t.url}/admin/companies/${companyId}/pipelines`, {
    method: "POST",
    headers: { "x-admin-token": t.server.ctx.adminToken, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as unknown };
}

const pipelineCount = () => t.server.ctx.prisma.pipeline.count({ where: { companyId: t.companyId } });

describe("the limits (shared/src/blueprint-limits.ts)", () => {
  const stages = (n: number, statuses = 1) => Array.from({ length: n }, (_, i) => ({ name: `S${i}`, statuses: Array.from({ length: statuses }, (_, j) => `T${j}`) }));
  const fields = (n: number) => Array.from({ length: n }, (_, i) => ({ key: `f${i}`, label: `F${i}`, type: "text" }));
  const select = (n: number) => ({ key: "pick", label: "Pick", type: "select", options: Array.from({ length: n }, (_, i) => `o${i}`) });

  it("accepts a file at every limit", () => {
    expect(blueprintLimitErrors({ name: "P", stages: stages(50) })).toEqual([]);
    expect(blueprintLimitErrors({ name: "P", stages: [{ name: "S", statuses: stages(20).map((s) => s.name) }] })).toEqual([]);
    expect(blueprintLimitErrors({ name: "P", stages: stages(1), custom_fields: fields(100) })).toEqual([]);
    expect(blueprintLimitErrors({ name: "P", stages: stages(1), custom_fields: [select(100)] })).toEqual([]);
  });

  it("names each limit one over, with the path of the list", () => {
    expect(blueprintLimitErrors({ name: "P", stages: stages(51) })).toEqual([{ path: "stages", message: "The blueprint has 51 stages; the limit is 50 stages." }]);
    expect(blueprintLimitErrors({ name: "P", stages: [stages(1)[0], { name: "S", statuses: stages(21).map((s) => s.name) }] })).toEqual([
      { path: "stages[1].statuses", message: "Stage 2 has 21 statuses; the limit is 20 statuses per stage." },
    ]);
    expect(blueprintLimitErrors({ name: "P", stages: stages(1), custom_fields: fields(101) })).toEqual([
      { path: "custom_fields", message: "The blueprint has 101 custom fields; the limit is 100 custom fields." },
    ]);
    expect(blueprintLimitErrors({ name: "P", stages: stages(1), custom_fields: [select(101)] })).toEqual([
      { path: "custom_fields[0].options", message: "Custom field 1 has 101 options; the limit is 100 options per select field." },
    ]);
  });

  it("counts 64 KB (65,536 bytes) on the UTF-8 JSON text, without the file's whitespace", () => {
    const withName = (name: string) => ({ name, stages: stages(1) });
    const overhead = blueprintJsonBytes(withName(""));
    expect(blueprintLimitErrors(withName("a".repeat(BLUEPRINT_LIMITS.jsonBytes - overhead)))).toEqual([]);
    expect(blueprintLimitErrors(withName("a".repeat(BLUEPRINT_LIMITS.jsonBytes - overhead + 1)))).toEqual([
      { path: "", message: "The blueprint is 65,537 bytes of JSON; the limit is 64 KB (65,536 bytes)." },
    ]);
    // "é" is one character but two bytes of UTF-8.
    expect(blueprintJsonBytes(withName("é")) - overhead).toBe(2);
  });
});

describe("a blueprint beyond the limits is refused with 422 naming the limit, and nothing is stored", () => {
  it("admin API: the issue's 5,000 stages and 5,000 fields", async () => {
    const before = await pipelineCount();
    const res = await adminImport(t.companyId, attackerBlueprint());
    expect(res.status).toBe(422);
    const problem = ProblemSchema.parse(res.body);
    expect(problem).toMatchObject({ status: 422, code: "validation_failed" });
    expect(problem.detail).toContain("the limit is 64 KB");
    expect(problem.errors!.map((e) => e.path)).toEqual(["", "stages", "custom_fields"]);
    expect(problem.errors![1]!.message).toBe("The blueprint has 5000 stages; the limit is 50 stages.");
    expect(problem.errors![2]!.message).toBe("The blueprint has 5000 custom fields; the limit is 100 custom fields.");
    expect(await pipelineCount()).toBe(before);
  });

  it("admin API: 51 small stages (under 64 KB) are over the stage limit; a file within every limit imports", async () => {
    const over = await adminImport(t.companyId, { name: "Many", stages: Array.from({ length: 51 }, (_, i) => ({ name: `S${i}` })) });
    expect(over.status).toBe(422);
    expect(ProblemSchema.parse(over.body).errors).toEqual([{ path: "stages", message: "The blueprint has 51 stages; the limit is 50 stages." }]);
    const within = await adminImport(t.companyId, { name: "Fifty", stages: Array.from({ length: 50 }, (_, i) => ({ name: `S${i}` })) });
    expect(within.status).toBe(201);
  });

  it("console: the import form answers 422 with the limits on the file field", async () => {
    const admin = await createConsoleUser(t, "admin");
    const http = await consoleOverHttp(t.url, admin);
    const before = await pipelineCount();
    const form = new FormData();
    form.append("file", new Blob([JSON.stringify(attackerBlueprint())], { type: "application/json" }), "huge.json");
    const res = await http.post("/console/pipelines/import", form, "/console/pipelines");
    expect(res.status).toBe(422);
    expect(res.text).toContain("The blueprint has 5000 stages; the limit is 50 stages.");
    expect(res.text).toContain("the limit is 64 KB (65,536 bytes)");
    expect(await pipelineCount()).toBe(before);
  });
});

describe("admin CLI", () => {
  const cli = useCliServer();

  it("pipelines import exits 1 naming the limits, and stores nothing", async () => {
    const companyId = (await cli.server.ctx.prisma.company.create({ data: { name: "Acme" } })).id;
    const file = path.join(cli.dataDir, "huge.json");
    fs.writeFileSync(file, JSON.stringify(attackerBlueprint(), null, 2));
    const res = await cli.run(["pipelines", "import", "--company", companyId, "--file", file]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("over the blueprint limits");
    expect(res.stderr).toContain("  - stages: The blueprint has 5000 stages; the limit is 50 stages.");
    expect(res.stderr).toContain("  - custom_fields: The blueprint has 5000 custom fields; the limit is 100 custom fields.");
    expect(await cli.server.ctx.prisma.pipeline.count({ where: { companyId } })).toBe(0);
  });
});

describe("a pipeline stored before the limits, with a huge blueprint", () => {
  const STAGES = 200;
  const FIELDS = 2000;
  let pipelineId: string;
  let blueprintBytes: number;
  /** Rows the raw SQL runner returned since the last reset. */
  let rows: Record<string, unknown>[] = [];
  let original: SqlRunner;

  beforeAll(async () => {
    const prisma = t.server.ctx.prisma;
    const blueprint = {
      custom_fields: Array.from({ length: FIELDS }, (_, i) => ({ key: `field_${i}`, label: `Field number ${i}`, type: "text" })),
    };
    blueprintBytes = blueprintJsonBytes(blueprint);
    // Inserted with SQL, as an old database could hold it (the import now refuses such a blueprint).
    pipelineId = "01900000-0000-7000-8000-0000000000aa";
    await prisma.$executeRawUnsafe(
      `INSERT INTO pipelines (id, company_id, name, short_id_prefix, blueprint) VALUES ($1, $2, 'Legacy', 'LEGACY', $3::jsonb)`,
      pipelineId,
      t.companyId,
      JSON.stringify(blueprint),
    );
    await prisma.$executeRawUnsafe(
      `INSERT INTO stages (id, pipeline_id, name, position) SELECT $1 || '-' || g, $1, 'Stage ' || g, g FROM generate_series(0, ${STAGES - 1}) g`,
      pipelineId,
    );
    await prisma.$executeRawUnsafe(
      `INSERT INTO statuses (id, stage_id, name, position)
       SELECT s.id || '-' || x.pos, s.id, x.name, x.pos FROM stages s, (VALUES ('Open', 0), ('Won', 1), ('Lost', 2)) AS x(name, pos)
       WHERE s.pipeline_id = $1`,
      pipelineId,
    );
    // Record every row the raw runner returns (the API, the console and the structure query read through it).
    original = sqlOf(prisma);
    registerSqlRunner(prisma, {
      concurrent: original.concurrent,
      query: async <T>(text: string, params?: readonly unknown[], options?: { name?: string }) => {
        const result = await original.query<T>(text, params, options);
        rows.push(...(result as Record<string, unknown>[]));
        return result;
      },
      transaction: (fn) => original.transaction(fn),
    });
  });
  afterAll(() => registerSqlRunner(t.server.ctx.prisma, original));
  beforeEach(() => {
    rows = [];
  });

  /** Rows that carried a blueprint column, and the JSON bytes of everything returned. */
  const blueprintRows = () => rows.filter((r) => r.blueprint !== undefined).length;
  const bytesReturned = () => rows.reduce((sum, r) => sum + blueprintJsonBytes(r), 0);

  it("loadPipelineStructure returns the blueprint once (one row), with every stage and status in order", async () => {
    const structure = await loadPipelineStructure(t.server.ctx.prisma, t.companyId, pipelineId);
    expect(structure!.stages).toHaveLength(STAGES);
    expect(structure!.stages[0]).toEqual({
      id: `${pipelineId}-0`,
      name: "Stage 0",
      statuses: ["Open", "Won", "Lost"].map((name, pos) => ({ id: `${pipelineId}-0-${pos}`, name })),
    });
    expect(structure!.stages[STAGES - 1]!.name).toBe(`Stage ${STAGES - 1}`);
    expect((structure!.blueprint as { custom_fields: unknown[] }).custom_fields).toHaveLength(FIELDS);
    expect(rows).toHaveLength(1);
    expect(blueprintRows()).toBe(1);
    // The blueprint plus the stages' JSON, not 600 copies of a blueprint of this size.
    expect(bytesReturned()).toBeLessThan(2 * blueprintBytes);
  });

  it("another company's id reads as unknown", async () => {
    expect(await loadPipelineStructure(t.server.ctx.prisma, (await t.newCompany()).companyId, pipelineId)).toBeNull();
  });

  it("the console lists pipelines without loading any blueprint, and opens this one reading its blueprint once", async () => {
    const member = await createConsoleUser(t, "member");
    const http = await consoleOverHttp(t.url, member);
    rows = [];
    const list = await http.get("/console/pipelines");
    expect(list.status).toBe(200);
    expect(list.text).toMatch(new RegExp(`Legacy</a></td>\\s*<td><code>LEGACY</code></td>\\s*<td>${STAGES}</td>\\s*<td>${FIELDS}</td>`));
    expect(blueprintRows()).toBe(0);

    rows = [];
    const detail = await http.get(`/console/pipelines/${pipelineId}`);
    expect(detail.status).toBe(200);
    expect(detail.text).toContain(`Stage ${STAGES - 1}`);
    expect(detail.text).toContain(`field_${FIELDS - 1}`);
    expect(blueprintRows()).toBe(1);
  });

  it("GET /v1/ext/pipelines lists it", async () => {
    const res = await t.request("GET", "/v1/ext/pipelines");
    expect(res.status).toBe(200);
    expect(res.body.map((p: { name: string }) => p.name)).toContain("Legacy");
  });
});
