/**
 * The raw-SQL hot paths of issue #4 (db/sql.ts): the pipeline-structure cache, the rate-limit counter shared by
 * several server instances on one database, and the single-statement create with its outbox event.
 */
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { createApp } from "../src/app";
import { findPipelineStructure } from "../src/db/pipelines";
import { startServer, type RunningServer } from "../src/server";
import { awayFromWindowEnd } from "./helpers/fixed-window";
import { startTestServer, testConfig, type TestServer } from "./helpers/test-server";

describe("hot paths", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t?.close();
  });

  describe("pipeline cache", () => {
    it("never serves one company's cached pipeline to another company", async () => {
      const { key } = await t.newKey();
      const mine = await t.request(
        "POST",
        "/v1/ext/items",
        { name: "Mine", pipeline_id: t.pipeline.id, stage_id: t.pipeline.stages[0]!.id },
        key,
      );
      expect(mine.status).toBe(201);
      const other = await t.newCompany("Cache Thief Co");
      const theirs = await t.request(
        "POST",
        "/v1/ext/items",
        { name: "Theirs", pipeline_id: t.pipeline.id, stage_id: t.pipeline.stages[0]!.id },
        other.apiKey,
      );
      expect(theirs.status).toBe(422);
      expect(theirs.body.errors.map((e: { path: string }) => e.path)).toEqual(["pipeline_id"]);
      expect(await findPipelineStructure(t.server.ctx.prisma, other.companyId, t.pipeline.id)).toBeNull();
      expect((await findPipelineStructure(t.server.ctx.prisma, t.companyId, t.pipeline.id))?.id).toBe(t.pipeline.id);
    });

    it("accepts a stage stored after the pipeline was first used", async () => {
      const { key } = await t.newKey();
      const prisma = t.server.ctx.prisma;
      const pipeline = await prisma.pipeline.create({
        data: {
          companyId: t.companyId,
          name: "Growing",
          shortIdPrefix: "GROW",
          stages: { create: [{ name: "Start", position: 0, statuses: { create: [{ name: "Open", position: 0 }] } }] },
        },
        include: { stages: true },
      });
      const first = await t.request("POST", "/v1/ext/items", { name: "A", pipeline_id: pipeline.id, stage_id: pipeline.stages[0]!.id }, key);
      expect(first.status).toBe(201);
      const later = await prisma.stage.create({
        data: { pipelineId: pipeline.id, name: "Later", position: 1, statuses: { create: [{ name: "Waiting", position: 0 }] } },
      });
      const second = await t.request("POST", "/v1/ext/items", { name: "B", pipeline_id: pipeline.id, stage_id: later.id }, key);
      expect(second.status).toBe(201);
      expect(second.body).toMatchObject({ stage: "Later", status: "Waiting", short_id: "GROW-2" });
    });
  });

  describe("create", () => {
    it("stores the item, its item.created event (payload equal to the response) and a delivery per subscription together", async () => {
      const { key } = await t.newKey();
      for (const url of ["https://hooks.example.com/hot-a", "https://hooks.example.com/hot-b"]) {
        const sub = await t.request("POST", "/v1/ext/webhooks", { target_url: url, event: "item.created" }, key);
        expect(sub.status).toBe(201);
      }
      const res = await t.request(
        "POST",
        "/v1/ext/items",
        { name: "Evented", pipeline_id: t.pipeline.id, stage_id: t.pipeline.stages[1]!.id, metadata: { deal_value: 12.5 } },
        key,
      );
      expect(res.status).toBe(201);
      const prisma = t.server.ctx.prisma;
      const event = await prisma.webhookEvent.findFirstOrThrow({ where: { resourceId: res.body.item_id, type: "item.created" } });
      expect(event.payload).toEqual(res.body);
      expect(Object.keys(event.payload as object)).toEqual(Object.keys(res.body));
      const deliveries = await prisma.webhookDelivery.findMany({ where: { eventId: event.id } });
      expect(deliveries).toHaveLength(2);
      expect(deliveries.map((d) => d.seq)).toEqual([event.seq, event.seq]);
      const read = await t.request("GET", `/v1/ext/items/${res.body.item_id}`, undefined, key);
      expect(read.body).toEqual(res.body);
    });
  });

  describe("rate limit", () => {
    it("keeps the rate-limit table unlogged", async () => {
      const rows = await t.server.ctx.prisma.$queryRaw<{ relpersistence: string }[]>`
        SELECT relpersistence::text AS relpersistence FROM pg_class WHERE oid = to_regclass('rate_limit_windows')`;
      expect(rows.map((r) => r.relpersistence)).toEqual(["u"]);
    });

    it("counts one key exactly across two server instances on one database", async () => {
      const { key } = await t.newKey();
      let second: RunningServer | undefined;
      let listener: Server | undefined;
      let secondUrl: string;
      if (t.server.db.kind === "postgres") {
        second = await startServer(testConfig({ databaseUrl: t.server.ctx.config.databaseUrl }));
        secondUrl = second.url;
      } else {
        // One in-memory PGlite cannot be opened twice: a second app (its own limiter and store) on the same database.
        const app = createApp(t.server.ctx);
        listener = await new Promise<Server>((resolve) => {
          const s = app.listen(0, "127.0.0.1", () => resolve(s));
        });
        secondUrl = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
      }
      try {
        // Stay inside one 60-second window (windows are aligned to the clock), from here: starting the second
        // server above can take seconds on a loaded machine.
        await awayFromWindowEnd(t.server.ctx.config.rateLimitWindowSeconds * 1000, 15_000);
        const hit = (base: string) =>
          fetch(`${base}/v1/ext/pipelines`, { headers: { "x-api-key": key } }).then(async (res) => {
            await res.arrayBuffer();
            return { status: res.status, remaining: Number(res.headers.get("ratelimit-remaining")) };
          });
        const results = await Promise.all(Array.from({ length: 60 }, (_, i) => hit(i % 2 === 0 ? t.url : secondUrl)));
        expect(results.every((r) => r.status === 200)).toBe(true);
        expect(results.map((r) => r.remaining).sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, i) => i));
        expect((await hit(secondUrl)).status).toBe(429);
        expect((await hit(t.url)).status).toBe(429);
      } finally {
        await second?.close();
        if (listener) await new Promise((r) => listener!.close(r));
      }
    }, 60_000); // up to 15 s waiting for the next window
  });
});
