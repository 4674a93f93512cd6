/**
 * CONTRACT "Idempotency" (draft-ietf-httpapi-idempotency-key-header) on POST /v1/ext/items, /tasks and /webhooks:
 * replay with `Idempotent-Replayed: true` (status, body, Location) creating and emitting nothing again; 422
 * `idempotency_key_reused` for a different body; 409 `idempotency_key_in_use` with `Retry-After` while the first
 * request runs; 400 for a malformed key; scoped to the company; 4xx replayed; expired keys ignored and purged.
 * On PostgreSQL (TEST_DATABASE_URL) also: exactly one item from concurrent retries spread over two server processes.
 */
import { expectReplayedProblem } from "./helpers/replayed-problem";
import type { AddressInfo } from "node:net";
import express from "express";
import { purgeExpiredKeys } from "../src/db/idempotency";
import { idempotentCreate } from "../src/http/idempotency";
import { renderProblem } from "../src/http/problem";
import type { AuthContext } from "../src/services/api-keys";
import { startIdempotencyPurge } from "../src/services/idempotency";
import { useProcessPair } from "./helpers/process-pair";
import { startTestServer, type TestServer } from "./helpers/test-server";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t?.close();
});

const key = (name: string) => ({ "Idempotency-Key": `${name}-${Math.random().toString(36).slice(2)}` });

function itemBody(name = "Acme deal") {
  const stage = t.pipeline.stages[0]!;
  return { name, pipeline_id: t.pipeline.id, stage_id: stage.id, metadata: { email: "ada@acme.example", deal_value: 1500 } };
}

async function itemCount(companyId = t.companyId): Promise<number> {
  return t.server.ctx.prisma.item.count({ where: { companyId } });
}

async function eventCount(type: string): Promise<number> {
  return t.server.ctx.prisma.webhookEvent.count({ where: { companyId: t.companyId, type } });
}

describe("Idempotency-Key on POST /v1/ext/items", () => {
  it("replays the first response (status, body, Location) with Idempotent-Replayed, creating and emitting nothing again", async () => {
    const h = key("item");
    const [items0, events0] = [await itemCount(), await eventCount("item.created")];
    const first = await t.request("POST", "/v1/ext/items", itemBody(), undefined, h);
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const again = await t.request("POST", "/v1/ext/items", itemBody(), undefined, h);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("location")).toBe(first.headers.get("location"));
    expect(again.headers.get("location")).toBe(`/v1/ext/items/${first.body.item_id}`);
    expect(again.body).toEqual(first.body);
    expect(await itemCount()).toBe(items0 + 1);
    expect(await eventCount("item.created")).toBe(events0 + 1);
    // Replayed as it was: a later update does not change the replay.
    const updated = await t.request("PATCH", `/v1/ext/items/${first.body.item_id}`, { name: "Renamed" });
    expect(updated.status).toBe(200);
    const third = await t.request("POST", "/v1/ext/items", itemBody(), undefined, h);
    expect(third.body).toEqual(first.body);
    expect(third.body.name).toBe("Acme deal");
  });

  it("compares bodies after JSON parsing: other whitespace and key order is the same request", async () => {
    const h = key("parsed");
    const body = itemBody("Parsed deal");
    const first = await t.request("POST", "/v1/ext/items", JSON.stringify(body), undefined, h);
    expect(first.status).toBe(201);
    const reordered = { metadata: { deal_value: 1500, email: "ada@acme.example" }, stage_id: body.stage_id, pipeline_id: body.pipeline_id, name: body.name };
    const again = await t.request("POST", "/v1/ext/items", `\n  ${JSON.stringify(reordered, null, 4)}  `, undefined, h);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body.item_id).toBe(first.body.item_id);
  });

  it("answers 422 idempotency_key_reused for a different body, or the same key on another endpoint", async () => {
    const h = key("reused");
    const before = await itemCount();
    expect((await t.request("POST", "/v1/ext/items", itemBody("One"), undefined, h)).status).toBe(201);
    const other = await t.request("POST", "/v1/ext/items", itemBody("Two"), undefined, h);
    expect(other.status).toBe(422);
    expect(other.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(other.body.code).toBe("idempotency_key_reused");
    const task = await t.request("POST", "/v1/ext/tasks", { title: "T", due_at: "2026-03-01T09:00:00Z", assigned_to: "ada" }, undefined, h);
    expect(task.status).toBe(422);
    expect(task.body.code).toBe("idempotency_key_reused");
    expect(await itemCount()).toBe(before + 1);
  });

  it("scopes keys to the company: another company's same key creates its own item", async () => {
    const other = await t.newCompany("Key Scope Co");
    const h = key("scoped");
    const mine = await t.request("POST", "/v1/ext/items", itemBody(), undefined, h);
    const stage = other.pipeline.stages[0]!;
    const theirs = await t.request("POST", "/v1/ext/items", { name: "Acme deal", pipeline_id: other.pipeline.id, stage_id: stage.id }, other.apiKey, h);
    expect(mine.status).toBe(201);
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get("idempotent-replayed")).toBeNull();
    expect(theirs.body.item_id).not.toBe(mine.body.item_id);
  });

  it("answers 400 for a malformed key and creates nothing", async () => {
    const before = await itemCount();
    for (const bad of ["", "x".repeat(256), "caf\u00e9"]) {
      const res = await t.request("POST", "/v1/ext/items", itemBody(), undefined, { "Idempotency-Key": bad });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("validation_failed");
      expect(res.body.errors).toEqual([{ path: "Idempotency-Key", message: expect.stringContaining("1 to 255 printable ASCII") }]);
    }
    const longest = await t.request("POST", "/v1/ext/items", itemBody(), undefined, { "Idempotency-Key": `${"k".repeat(250)} ~!@#` });
    expect(longest.status).toBe(201);
    expect(await itemCount()).toBe(before + 1);
  });

  it("replays a 4xx of the first request (400 and 422) too", async () => {
    const h400 = key("bad-body");
    const bad = { pipeline_id: t.pipeline.id, stage_id: t.pipeline.stages[0]!.id };
    const first400 = await t.request("POST", "/v1/ext/items", bad, undefined, h400);
    expect(first400.status).toBe(400);
    const again400 = await t.request("POST", "/v1/ext/items", bad, undefined, h400);
    expect(again400.status).toBe(400);
    expect(again400.headers.get("idempotent-replayed")).toBe("true");
    expectReplayedProblem(again400, first400);

    const h422 = key("bad-ref");
    const badRef = { ...itemBody(), stage_id: "no-such-stage" };
    const first422 = await t.request("POST", "/v1/ext/items", badRef, undefined, h422);
    expect(first422.status).toBe(422);
    expect(first422.body.code).toBe("invalid_reference");
    const again422 = await t.request("POST", "/v1/ext/items", badRef, undefined, h422);
    expect(again422.status).toBe(422);
    expect(again422.headers.get("idempotent-replayed")).toBe("true");
    expectReplayedProblem(again422, first422);
    // The key is spent on that request: a corrected body needs a new key.
    const corrected = await t.request("POST", "/v1/ext/items", itemBody(), undefined, h422);
    expect(corrected.body.code).toBe("idempotency_key_reused");
  });

  it("ignores an expired key (a new create), and the purge deletes expired keys", async () => {
    const h = key("expired");
    const first = await t.request("POST", "/v1/ext/items", itemBody("Old"), undefined, h);
    expect(first.status).toBe(201);
    const prisma = t.server.ctx.prisma;
    await prisma.idempotencyKey.updateMany({ where: { companyId: t.companyId, key: h["Idempotency-Key"] }, data: { expiresAt: new Date(Date.now() - 1000) } });
    const second = await t.request("POST", "/v1/ext/items", itemBody("Old"), undefined, h);
    expect(second.status).toBe(201);
    expect(second.headers.get("idempotent-replayed")).toBeNull();
    expect(second.body.item_id).not.toBe(first.body.item_id);
    const stored = await prisma.idempotencyKey.findUniqueOrThrow({ where: { companyId_key: { companyId: t.companyId, key: h["Idempotency-Key"] } } });
    expect(stored.expiresAt.getTime() - Date.now()).toBeGreaterThan(23.9 * 3600 * 1000);
    expect(stored.expiresAt.getTime() - Date.now()).toBeLessThanOrEqual(24 * 3600 * 1000);

    await prisma.idempotencyKey.updateMany({ where: { companyId: t.companyId }, data: { expiresAt: new Date(Date.now() - 1000) } });
    const left = await prisma.idempotencyKey.count();
    expect(left).toBeGreaterThan(0);
    const purge = startIdempotencyPurge(prisma, (err) => {
      throw err;
    }, 3_600_000);
    await purge.runNow();
    await purge.stop();
    expect(await prisma.idempotencyKey.count({ where: { expiresAt: { lte: new Date() } } })).toBe(0);
    expect(await purgeExpiredKeys(prisma)).toBe(0);
  });

  it("answers 409 idempotency_key_in_use with Retry-After while the first request runs in this process", async () => {
    // The create route's wrapper around a create that waits until the test lets it finish.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let creates = 0;
    const app = express();
    app.use(express.json());
    app.use((req, _res, next) => {
      req.auth = { company: { id: t.companyId } } as AuthContext;
      next();
    });
    app.post(
      "/v1/ext/items",
      idempotentCreate(t.server.ctx, async () => {
        creates++;
        await gate;
        return { status: 201, body: { created: creates }, location: "/v1/ext/items/x" };
      }),
    );
    app.use(renderProblem(t.server.ctx.logger));
    const server = app.listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/ext/items`;
      const h = { ...key("in-use"), "content-type": "application/json" };
      const first = fetch(url, { method: "POST", headers: h, body: "{}" });
      while (creates === 0) await new Promise((r) => setTimeout(r, 5));
      const busy = await fetch(url, { method: "POST", headers: h, body: "{}" });
      expect(busy.status).toBe(409);
      expect(busy.headers.get("retry-after")).toBe("1");
      expect(((await busy.json()) as { code: string }).code).toBe("idempotency_key_in_use");
      release();
      expect((await first).status).toBe(201);
      expect(creates).toBe(1);
    } finally {
      release();
      await new Promise((r) => server.close(r));
    }
  });
});

// On PostgreSQL a key is also held across processes: by the advisory lock of the transaction that creates with it.
if (process.env.TEST_DATABASE_URL) {
  describe("Idempotency-Key held by another process (PostgreSQL)", () => {
    it("answers 409 idempotency_key_in_use with Retry-After on items and tasks while another connection holds the key", async () => {
      const h = key("in-use-pg");
      const body = itemBody("Busy deal");
      const client = await t.server.db.pgPool!.connect();
      try {
        await client.query("BEGIN");
        await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1 || chr(10) || $2, 0))", [t.companyId, h["Idempotency-Key"]]);
        const busy = await t.request("POST", "/v1/ext/items", body, undefined, h);
        expect(busy.status).toBe(409);
        expect(busy.body.code).toBe("idempotency_key_in_use");
        expect(busy.headers.get("retry-after")).toBe("1");
        const busyTask = await t.request("POST", "/v1/ext/tasks", { title: "T", due_at: "2026-03-01T09:00:00Z", assigned_to: "ada" }, undefined, h);
        expect(busyTask.status).toBe(409);
        expect(busyTask.body.code).toBe("idempotency_key_in_use");
      } finally {
        await client.query("COMMIT");
        client.release();
      }
      // Once the key is free the request goes through, and a retry then replays it.
      const done = await t.request("POST", "/v1/ext/items", body, undefined, h);
      expect(done.status).toBe(201);
      const replay = await t.request("POST", "/v1/ext/items", body, undefined, h);
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(replay.body.item_id).toBe(done.body.item_id);
    });
  });
}

describe("Idempotency-Key on POST /v1/ext/tasks and /v1/ext/webhooks", () => {
  it("replays a task create with its Location and creates one task and one task.created event", async () => {
    const h = key("task");
    const body = { title: "Call Ada", due_at: "2026-03-01T09:00:00Z", assigned_to: "ada", is_completed: true };
    const [tasks0, created0, completed0] = [await t.server.ctx.prisma.task.count(), await eventCount("task.created"), await eventCount("task.completed")];
    const first = await t.request("POST", "/v1/ext/tasks", body, undefined, h);
    expect(first.status).toBe(201);
    const again = await t.request("POST", "/v1/ext/tasks", body, undefined, h);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("location")).toBe(`/v1/ext/tasks/${first.body.task_id}`);
    expect(again.body).toEqual(first.body);
    expect(await t.server.ctx.prisma.task.count()).toBe(tasks0 + 1);
    expect(await eventCount("task.created")).toBe(created0 + 1);
    expect(await eventCount("task.completed")).toBe(completed0 + 1);
    const differs = await t.request("POST", "/v1/ext/tasks", { ...body, title: "Call Bob" }, undefined, h);
    expect(differs.status).toBe(422);
    expect(differs.body.code).toBe("idempotency_key_reused");
  });

  it("replays a subscribe (the same subscription and secret) and subscribes once", async () => {
    const h = key("hook");
    const body = { target_url: "https://hooks.example.com/idem", event: "item.created" };
    const before = await t.server.ctx.prisma.webhookSubscription.count({ where: { companyId: t.companyId } });
    const first = await t.request("POST", "/v1/ext/webhooks", body, undefined, h);
    expect(first.status).toBe(201);
    const again = await t.request("POST", "/v1/ext/webhooks", body, undefined, h);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    expect(await t.server.ctx.prisma.webhookSubscription.count({ where: { companyId: t.companyId } })).toBe(before + 1);
    // A 422 (unknown event) is replayed as well.
    const h2 = key("hook-bad");
    const bad = { target_url: "https://hooks.example.com/idem", event: "item.exploded" };
    const firstBad = await t.request("POST", "/v1/ext/webhooks", bad, undefined, h2);
    expect(firstBad.status).toBe(422);
    const againBad = await t.request("POST", "/v1/ext/webhooks", bad, undefined, h2);
    expect(againBad.headers.get("idempotent-replayed")).toBe("true");
    expectReplayedProblem(againBad, firstBad);
  });

  it("does not store responses refused before the create (403 insufficient scope)", async () => {
    const readOnly = await t.newKey(["items:read"]);
    const h = key("scope");
    const refused = await t.request("POST", "/v1/ext/items", itemBody(), readOnly.key, h);
    expect(refused.status).toBe(403);
    const allowed = await t.request("POST", "/v1/ext/items", itemBody(), undefined, h);
    expect(allowed.status).toBe(201);
    expect(allowed.headers.get("idempotent-replayed")).toBeNull();
  });
});

// Two processes on one database need PostgreSQL: the embedded PGlite belongs to the one process that opened it.
// This block is defined only in the PostgreSQL pass (TEST_DATABASE_URL).
if (process.env.TEST_DATABASE_URL) {
  describe("two server processes on one PostgreSQL database", () => {
    const pair = useProcessPair();

    it("creates exactly one item for a burst of retries with one key spread over both processes", async () => {
      const { a, b, apiKey } = pair;
      const headers = { "x-api-key": apiKey, "content-type": "application/json" };
      const pipelines = (await (await fetch(`${a.url}/v1/ext/pipelines`, { headers })).json()) as { id: string }[];
      const stages = (await (await fetch(`${a.url}/v1/ext/pipelines/${pipelines[0]!.id}/stages`, { headers })).json()) as { id: string }[];
      for (let round = 0; round < 5; round++) {
        const idem = `burst-${round}-${Date.now()}`;
        const body = JSON.stringify({ name: `Burst ${round}`, pipeline_id: pipelines[0]!.id, stage_id: stages[0]!.id });
        const responses = await Promise.all(
          Array.from({ length: 12 }, (_, i) =>
            fetch(`${(i % 2 === 0 ? a : b).url}/v1/ext/items`, { method: "POST", headers: { ...headers, "Idempotency-Key": idem }, body }).then(async (r) => ({
              status: r.status,
              replayed: r.headers.get("idempotent-replayed"),
              body: (await r.json()) as { item_id?: string; code?: string },
            })),
          ),
        );
        const created = responses.filter((r) => r.status === 201);
        const busy = responses.filter((r) => r.status === 409);
        expect(created.length + busy.length).toBe(responses.length);
        expect(created.length).toBeGreaterThan(0);
        expect(new Set(created.map((r) => r.body.item_id)).size).toBe(1);
        expect(created.filter((r) => r.replayed === null)).toHaveLength(1);
        for (const r of busy) expect(r.body.code).toBe("idempotency_key_in_use");
        const list = (await (await fetch(`${a.url}/v1/ext/items?limit=500`, { headers })).json()) as { name: string }[];
        expect(list.filter((i: { name: string }) => i.name === `Burst ${round}`)).toHaveLength(1);
      }
    }, 60_000);
  });
}
