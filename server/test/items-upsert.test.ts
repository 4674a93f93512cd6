/**
 * POST /v1/ext/items/upsert (CONTRACT "Upsert (create or update, atomically)", issue 25): created / updated /
 * unchanged with the `Stageline-Upsert` header, matching by the pipeline's duplicate-detection rule, `409
 * ambiguous_match` with `matches`, `422 upsert_unavailable`, validation as create (PATCH placement on update), events
 * exactly once per real change (counted in the outbox), `source` kept when left out, tenant isolation, idempotency
 * replay, and atomicity: 20 concurrent upserts of one email make exactly one item (and, on PostgreSQL, the same with
 * the requests spread over two server processes sharing one database).
 */
import { expectReplayedProblem } from "./helpers/replayed-problem";
import { UPSERT_RESULT_HEADER } from "@stageline/shared";
import { useProcessPair } from "./helpers/process-pair";
import { createSimplePipeline } from "./helpers/simple-pipeline";
import { startTestServerWithRateLimit, type TestServer } from "./helpers/test-server";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServerWithRateLimit(100_000);
});
afterAll(async () => {
  await t?.close();
});

const UPSERT = "/v1/ext/items/upsert";
const unique = (label: string) => `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}@example.com`;
const upsert = (body: unknown, key?: string | null, headers?: Record<string, string>) => t.request("POST", UPSERT, body, key, headers);

function body(email: string, extra: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) {
  return { name: "Upserted deal", pipeline_id: t.pipeline.id, stage_id: t.pipeline.stages[0]!.id, metadata: { email, ...metadata }, ...extra };
}

async function events(itemId: string, type: string): Promise<number> {
  return t.server.ctx.prisma.webhookEvent.count({ where: { companyId: t.companyId, resourceId: itemId, type } });
}

async function itemsWithEmail(email: string, companyId = t.companyId): Promise<{ id: string; version: number; source: string }[]> {
  const rows = await t.server.ctx.prisma.item.findMany({ where: { companyId }, select: { id: true, version: true, source: true, metadata: true } });
  return rows
    .filter((r) => String((r.metadata as Record<string, unknown>).email ?? "").trim().toLowerCase() === email.toLowerCase())
    .map(({ id, version, source }) => ({ id, version, source }));
}

const createPipeline = (name: string, prefix: string, blueprint: object) => createSimplePipeline(t, name, prefix, blueprint);

describe("POST /v1/ext/items/upsert: created, updated, unchanged", () => {
  it("creates when nothing matches: 201, Location, Stageline-Upsert: created, one item.created", async () => {
    const email = unique("new");
    const res = await upsert(body(email, { source: "zapier" }));
    expect(res.status).toBe(201);
    expect(res.headers.get(UPSERT_RESULT_HEADER)).toBe("created");
    expect(res.headers.get("location")).toBe(`/v1/ext/items/${res.body.item_id}`);
    expect(res.body).toMatchObject({ name: "Upserted deal", email, version: 1, source: "zapier", stage: "Lead", status: "Open" });
    expect(res.body.short_id).toMatch(/^SALES-\d+$/);
    expect(await events(res.body.item_id, "item.created")).toBe(1);
    const got = await t.request("GET", `/v1/ext/items/${res.body.item_id}`);
    expect(got.body).toEqual(res.body);
  });

  it("updates the one match (email compared trimmed and case-insensitively): 200, updated, version + 1, one item.updated", async () => {
    const email = unique("upd");
    const first = await upsert(body(email, {}, { deal_value: 100 }));
    expect(first.status).toBe(201);
    const res = await upsert(body(`  ${email.toUpperCase()} `.trim(), { name: "Renamed deal" }, { deal_value: 250 }));
    expect(res.status).toBe(200);
    expect(res.headers.get(UPSERT_RESULT_HEADER)).toBe("updated");
    expect(res.headers.get("location")).toBeNull();
    expect(res.body).toMatchObject({ item_id: first.body.item_id, short_id: first.body.short_id, name: "Renamed deal", deal_value: 250, version: 2 });
    // The stored email keeps the first spelling: metadata is merged, and the upper-case spelling is a change too.
    expect(await events(first.body.item_id, "item.updated")).toBe(1);
    expect(await events(first.body.item_id, "item.stage_changed")).toBe(0);
    expect(await itemsWithEmail(email)).toHaveLength(1);
  });

  it("answers unchanged when the body changes nothing: 200, same version, no event", async () => {
    const email = unique("same");
    const first = await upsert(body(email, {}, { deal_value: 7 }));
    const again = await upsert(body(email, {}, { deal_value: 7 }));
    expect(again.status).toBe(200);
    expect(again.headers.get(UPSERT_RESULT_HEADER)).toBe("unchanged");
    expect(again.body).toEqual(first.body);
    expect(await events(first.body.item_id, "item.updated")).toBe(0);
    expect((await itemsWithEmail(email))[0]!.version).toBe(1);
  });

  it("moves the stage as PATCH would and emits item.updated and item.stage_changed once each", async () => {
    const email = unique("stage");
    const first = await upsert(body(email));
    const qualified = t.pipeline.stages[1]!;
    const res = await upsert(body(email, { stage_id: qualified.id }));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ stage: qualified.name, status: qualified.statuses[0]!.name, version: 2 });
    expect(await events(first.body.item_id, "item.updated")).toBe(1);
    expect(await events(first.body.item_id, "item.stage_changed")).toBe(1);
    // Same stage without status_id keeps the current status (PATCH rule), where a create would take the first one.
    const won = qualified.statuses.find((s) => s.name === "Won")!;
    expect((await t.request("PATCH", `/v1/ext/items/${first.body.item_id}`, { status_id: won.id })).status).toBe(200);
    const kept = await upsert(body(email, { stage_id: qualified.id }));
    expect(kept.headers.get(UPSERT_RESULT_HEADER)).toBe("unchanged");
    expect(kept.body.status).toBe("Won");
  });

  it("keeps the stored source when the body leaves it out, and changes it when the body gives one", async () => {
    const email = unique("src");
    const first = await upsert(body(email, { source: "zapier" }));
    expect(first.body.source).toBe("zapier");
    const omitted = await upsert(body(email, {}, { deal_value: 1 }));
    expect(omitted.headers.get(UPSERT_RESULT_HEADER)).toBe("updated");
    expect(omitted.body.source).toBe("zapier");
    const given = await upsert(body(email, { source: "n8n" }, { deal_value: 1 }));
    expect(given.headers.get(UPSERT_RESULT_HEADER)).toBe("updated");
    expect(given.body.source).toBe("n8n");
  });
});

describe("POST /v1/ext/items/upsert: refusals", () => {
  it("answers 409 ambiguous_match with the matches' ids, best match first, and writes nothing", async () => {
    const email = unique("amb");
    const older = await t.request("POST", "/v1/ext/items", body(email));
    const newer = await t.request("POST", "/v1/ext/items", body(email.toUpperCase()));
    expect([older.status, newer.status]).toEqual([201, 201]);
    const before = await t.server.ctx.prisma.webhookEvent.count({ where: { companyId: t.companyId } });
    const res = await upsert(body(email, { name: "Changed" }));
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("ambiguous_match");
    expect(res.body.matches).toEqual([newer.body.item_id, older.body.item_id]);
    expect(res.headers.get(UPSERT_RESULT_HEADER)).toBeNull();
    expect(await t.server.ctx.prisma.webhookEvent.count({ where: { companyId: t.companyId } })).toBe(before);
    expect((await t.request("GET", `/v1/ext/items/${older.body.item_id}`)).body.name).toBe("Upserted deal");
  });

  it("answers 422 upsert_unavailable for a pipeline without duplicate detection", async () => {
    const plain = await createPipeline("Plain", "PLN", { custom_fields: [{ key: "email", label: "Email", type: "email" }] });
    const res = await upsert({ name: "X", pipeline_id: plain.id, stage_id: plain.stageId, metadata: { email: unique("plain") } });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe("upsert_unavailable");
    expect(await t.server.ctx.prisma.item.count({ where: { pipelineId: plain.id } })).toBe(0);
  });

  it("answers 422 upsert_unavailable for a body without any field the rule compares (and, for match all, without every one)", async () => {
    const none = await upsert({ name: "No email", pipeline_id: t.pipeline.id, stage_id: t.pipeline.stages[0]!.id, metadata: { deal_value: 5 } });
    expect(none.status).toBe(422);
    expect(none.body.code).toBe("upsert_unavailable");
    const blank = await upsert({ name: "Blank", pipeline_id: t.pipeline.id, stage_id: t.pipeline.stages[0]!.id });
    expect(blank.body.code).toBe("upsert_unavailable");
    const all = await createPipeline("All of them", "ALLF", {
      custom_fields: [{ key: "email", label: "Email", type: "email" }],
      duplicate_detection: { fields: ["email", "contact_id"], match: "all" },
    });
    const partial = await upsert({ name: "Partial", pipeline_id: all.id, stage_id: all.stageId, metadata: { email: unique("all") } });
    expect(partial.status).toBe(422);
    expect(partial.body.code).toBe("upsert_unavailable");
    const email = unique("all");
    const full = { name: "Full", pipeline_id: all.id, stage_id: all.stageId, contact_id: "c-1", metadata: { email } };
    expect((await upsert(full)).status).toBe(201);
    const again = await upsert({ ...full, contact_id: "C-1 ", name: "Full again" });
    expect(again.status).toBe(200);
    expect(again.headers.get(UPSERT_RESULT_HEADER)).toBe("updated");
  });

  it("validates as create: unknown pipeline, stage or custom field is 422 invalid_reference; required fields only when it creates", async () => {
    const unknownPipeline = await upsert({ ...body(unique("v")), pipeline_id: "no-such-pipeline" });
    expect(unknownPipeline.status).toBe(422);
    expect(unknownPipeline.body.code).toBe("invalid_reference");
    const badStage = await upsert(body(unique("v"), { stage_id: "no-such-stage" }));
    expect(badStage.body.code).toBe("invalid_reference");
    expect(badStage.body.errors.map((e: { path: string }) => e.path)).toContain("stage_id");
    const badField = await upsert(body(unique("v"), {}, { nope: 1 }));
    expect(badField.body.code).toBe("invalid_reference");
    const wrongType = await upsert(body(unique("v"), {}, { deal_value: "lots" }));
    expect(wrongType.body.code).toBe("invalid_reference");
    const malformed = await upsert({ ...body(unique("v")), unexpected: true });
    expect(malformed.status).toBe(400);

    const strict = await createPipeline("Strict", "STR", {
      custom_fields: [
        { key: "email", label: "Email", type: "email" },
        { key: "company", label: "Company", type: "text", required: true },
      ],
      duplicate_detection: { fields: ["email"], match: "any" },
    });
    const email = unique("strict");
    const missing = await upsert({ name: "S", pipeline_id: strict.id, stage_id: strict.stageId, metadata: { email } });
    expect(missing.status).toBe(422);
    expect(missing.body.errors.map((e: { path: string }) => e.path)).toContain("metadata.company");
    const created = await upsert({ name: "S", pipeline_id: strict.id, stage_id: strict.stageId, metadata: { email, company: "Acme" } });
    expect(created.status).toBe(201);
    const updated = await upsert({ name: "S2", pipeline_id: strict.id, stage_id: strict.stageId, metadata: { email } });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ name: "S2", company: "Acme" });
  });

  it("answers 422 pipeline_archived in an archived pipeline, whether it would create or update", async () => {
    const archived = await createPipeline("Archived", "ARC", {
      custom_fields: [{ key: "email", label: "Email", type: "email" }],
      duplicate_detection: { fields: ["email"], match: "any" },
    });
    const email = unique("arc");
    const b = { name: "A", pipeline_id: archived.id, stage_id: archived.stageId, metadata: { email } };
    expect((await upsert(b)).status).toBe(201);
    await t.server.ctx.prisma.pipeline.update({ where: { id: archived.id }, data: { archivedAt: new Date() } });
    for (const attempt of [b, { ...b, metadata: { email: unique("arc2") } }]) {
      const res = await upsert(attempt);
      expect(res.status).toBe(422);
      expect(res.body.code).toBe("pipeline_archived");
    }
  });

  it("needs items:write (403 with a read-only key)", async () => {
    const { key } = await t.newKey(["items:read"]);
    const res = await upsert(body(unique("scope")), key);
    expect(res.status).toBe(403);
    expect(res.body.code).toBe("insufficient_scope");
  });

  it("never matches another company's item: the other company creates its own, and cannot use this company's pipeline", async () => {
    const email = unique("tenant");
    const mine = await upsert(body(email, {}, { deal_value: 1 }));
    expect(mine.status).toBe(201);
    const other = await t.newCompany("Other Co");
    const theirs = await t.request(
      "POST",
      UPSERT,
      { name: "Theirs", pipeline_id: other.pipeline.id, stage_id: other.pipeline.stages[0]!.id, metadata: { email, deal_value: 2 } },
      other.apiKey,
    );
    expect(theirs.status).toBe(201);
    expect(theirs.body.item_id).not.toBe(mine.body.item_id);
    const foreignPipeline = await t.request("POST", UPSERT, body(email, {}, { deal_value: 3 }), other.apiKey);
    expect(foreignPipeline.status).toBe(422);
    expect(foreignPipeline.body.code).toBe("invalid_reference");
    const after = await t.request("GET", `/v1/ext/items/${mine.body.item_id}`);
    expect(after.body).toMatchObject({ deal_value: 1, version: 1 });
  });
});

describe("POST /v1/ext/items/upsert: Idempotency-Key", () => {
  it("replays the first response with its status, Location and Stageline-Upsert header, writing nothing again", async () => {
    const email = unique("idem");
    const h = { "Idempotency-Key": `upsert-${email}` };
    const first = await upsert(body(email), undefined, h);
    expect(first.status).toBe(201);
    const again = await upsert(body(email), undefined, h);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get(UPSERT_RESULT_HEADER)).toBe("created");
    expect(again.headers.get("location")).toBe(first.headers.get("location"));
    expect(again.body).toEqual(first.body);

    const h2 = { "Idempotency-Key": `upsert-2-${email}` };
    const update = await upsert(body(email, {}, { deal_value: 9 }), undefined, h2);
    expect(update.headers.get(UPSERT_RESULT_HEADER)).toBe("updated");
    const replay = await upsert(body(email, {}, { deal_value: 9 }), undefined, h2);
    expect(replay.status).toBe(200);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.headers.get(UPSERT_RESULT_HEADER)).toBe("updated");
    expect(replay.body).toEqual(update.body);
    expect(await events(first.body.item_id, "item.created")).toBe(1);
    expect(await events(first.body.item_id, "item.updated")).toBe(1);

    const reused = await upsert(body(email, {}, { deal_value: 10 }), undefined, h2);
    expect(reused.status).toBe(422);
    expect(reused.body.code).toBe("idempotency_key_reused");
  });

  it("replays a refusal (409 ambiguous_match) too", async () => {
    const email = unique("idem-amb");
    await t.request("POST", "/v1/ext/items", body(email));
    await t.request("POST", "/v1/ext/items", body(email));
    const h = { "Idempotency-Key": `amb-${email}` };
    const first = await upsert(body(email), undefined, h);
    expect(first.status).toBe(409);
    const again = await upsert(body(email), undefined, h);
    expect(again.status).toBe(409);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expectReplayedProblem(again, first);
  });
});

describe("POST /v1/ext/items/upsert: atomic", () => {
  it("20 concurrent upserts of one email make exactly one item; the others answer updated or unchanged; one event per real change", async () => {
    const email = unique("race");
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => upsert(body(i % 2 === 0 ? email : ` ${email.toUpperCase()}`.trim(), {}, { deal_value: i % 5 }))),
    );
    const results = responses.map((r) => r.headers.get(UPSERT_RESULT_HEADER));
    expect(responses.filter((r) => r.status === 201)).toHaveLength(1);
    expect(responses.filter((r) => r.status === 200)).toHaveLength(19);
    expect(results.filter((r) => r === "created")).toHaveLength(1);
    expect(results.filter((r) => r === "updated").length + results.filter((r) => r === "unchanged").length).toBe(19);
    const ids = new Set(responses.map((r) => r.body.item_id));
    expect(ids.size).toBe(1);
    const [id] = [...ids] as string[];
    expect(await itemsWithEmail(email)).toHaveLength(1);
    expect(await events(id!, "item.created")).toBe(1);
    const updates = results.filter((r) => r === "updated").length;
    expect(await events(id!, "item.updated")).toBe(updates);
    expect((await itemsWithEmail(email))[0]!.version).toBe(1 + updates);
  });

  it("upserts of different emails and other companies run side by side (one item each)", async () => {
    const emails = Array.from({ length: 6 }, (_, i) => unique(`side-${i}`));
    const other = await t.newCompany("Side Co");
    const responses = await Promise.all([
      ...emails.map((e) => upsert(body(e))),
      ...emails.map((e) =>
        t.request("POST", UPSERT, { name: "Other", pipeline_id: other.pipeline.id, stage_id: other.pipeline.stages[0]!.id, metadata: { email: e } }, other.apiKey),
      ),
    ]);
    expect(responses.map((r) => r.status)).toEqual(Array(12).fill(201));
    for (const e of emails) {
      expect(await itemsWithEmail(e)).toHaveLength(1);
      expect(await itemsWithEmail(e, other.companyId)).toHaveLength(1);
    }
  });
});

// Two processes on one database need PostgreSQL: the embedded PGlite belongs to the one process that opened it.
if (process.env.TEST_DATABASE_URL) {
  describe("two server processes on one PostgreSQL database", () => {
    const pair = useProcessPair();

    it("makes exactly one item from 20 concurrent upserts of one email spread over both processes", async () => {
      const { a, b, apiKey } = pair;
      const headers = { "x-api-key": apiKey, "content-type": "application/json" };
      const pipelines = (await (await fetch(`${a.url}/v1/ext/pipelines`, { headers })).json()) as { id: string }[];
      const stages = (await (await fetch(`${a.url}/v1/ext/pipelines/${pipelines[0]!.id}/stages`, { headers })).json()) as { id: string }[];
      for (let round = 0; round < 3; round++) {
        const email = unique(`proc-${round}`);
        const responses = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            fetch(`${(i % 2 === 0 ? a : b).url}${UPSERT}`, {
              method: "POST",
              headers,
              body: JSON.stringify({ name: `Proc ${round}`, pipeline_id: pipelines[0]!.id, stage_id: stages[0]!.id, metadata: { email, deal_value: i % 3 } }),
            }).then(async (r) => ({ status: r.status, result: r.headers.get(UPSERT_RESULT_HEADER), body: (await r.json()) as { item_id: string } })),
          ),
        );
        expect(responses.filter((r) => r.status === 201)).toHaveLength(1);
        expect(responses.filter((r) => r.status === 200)).toHaveLength(19);
        expect(responses.filter((r) => r.result === "created")).toHaveLength(1);
        expect(new Set(responses.map((r) => r.body.item_id)).size).toBe(1);
        const list = (await (await fetch(`${b.url}/v1/ext/items?name=${encodeURIComponent(`Proc ${round}`)}`, { headers })).json()) as unknown[];
        expect(list).toHaveLength(1);
      }
    }, 60_000);
  });
}
