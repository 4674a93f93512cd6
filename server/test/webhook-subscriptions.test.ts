import http from "node:http";
import type { AddressInfo } from "node:net";
import { EVENT_NAMES, MAX_SUBSCRIPTIONS_PER_COMPANY, WebhookSubscriptionCreatedSchema } from "@stageline/shared";
import { startTestServer, type TestServer } from "./helpers/test-server";

const TARGET = "https://hooks.example.com/stageline";

describe("REST-hook subscriptions", () => {
  let t: TestServer;
  let receiver: http.Server;
  let receiverUrl: string;
  beforeAll(async () => {
    t = await startTestServer();
    // A local receiver, so a running dispatcher never reaches outside the machine.
    receiver = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => res.writeHead(200).end("ok"));
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  });
  afterAll(async () => {
    await t?.close();
    await new Promise((resolve) => receiver?.close(resolve));
  });

  describe("subscribing", () => {
    let key: string;
    beforeAll(async () => {
      key = (await t.newKey(["hooks:manage"])).key;
    });

    it("answers 201 with the subscription and its signing secret", async () => {
      const res = await t.request("POST", "/v1/ext/webhooks", { target_url: TARGET, event: "item.created" }, key);
      expect(res.status).toBe(201);
      expect(WebhookSubscriptionCreatedSchema.parse(res.body)).toEqual(res.body);
      expect(res.body).toMatchObject({ id: expect.any(String), target_url: TARGET, event: "item.created" });
    });

    it("issues a Standard Webhooks secret: whsec_ and base64 of 32 random bytes", async () => {
      const res = await t.request("POST", "/v1/ext/webhooks", { target_url: TARGET, event: "task.created" }, key);
      expect(res.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
      expect(Buffer.from(res.body.secret.slice("whsec_".length), "base64")).toHaveLength(32);
    });

    it("gives every subscription a different secret", async () => {
      const a = await t.request("POST", "/v1/ext/webhooks", { target_url: TARGET, event: "task.updated" }, key);
      const b = await t.request("POST", "/v1/ext/webhooks", { target_url: TARGET, event: "task.updated" }, key);
      expect(a.body.secret).not.toBe(b.body.secret);
    });

    it("accepts every documented event name", async () => {
      for (const event of EVENT_NAMES) {
        const res = await t.request("POST", "/v1/ext/webhooks", { target_url: TARGET, event }, key);
        expect(res.status).toBe(201);
      }
    });

    it("refuses an unknown event as 422 listing the valid ones", async () => {
      const res = await t.request("POST", "/v1/ext/webhooks", { target_url: TARGET, event: "item.archived" }, key);
      expect(res.status).toBe(422);
      expect(res.body.code).toBe("invalid_reference");
      expect(res.body.valid_events).toEqual([...EVENT_NAMES]);
      for (const event of EVENT_NAMES) expect(res.body.detail).toContain(event);
    });

    it("refuses a body without target_url or event as 400 naming both", async () => {
      const res = await t.request("POST", "/v1/ext/webhooks", {}, key);
      expect(res.status).toBe(400);
      expect(res.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(["event", "target_url"]);
    });

    it("refuses a target_url that is not an http(s) URL as 400", async () => {
      const res = await t.request("POST", "/v1/ext/webhooks", { target_url: "ftp://hooks.example.com/x", event: "item.created" }, key);
      expect(res.status).toBe(400);
      expect(res.body.errors[0].path).toBe("target_url");
    });

    it("accepts an http loopback target when the server runs in test mode", async () => {
      const res = await t.request("POST", "/v1/ext/webhooks", { target_url: "http://127.0.0.1:9/hook", event: "item.created" }, key);
      expect(res.status).toBe(201);
    });

    it("requires the hooks:manage scope", async () => {
      const { key: tasksOnly } = await t.newKey(["tasks:read", "tasks:write"]);
      const res = await t.request("POST", "/v1/ext/webhooks", { target_url: TARGET, event: "item.created" }, tasksOnly);
      expect(res.status).toBe(403);
      expect(res.body.detail).toContain("hooks:manage");
    });
  });

  describe("listing", () => {
    let company: Awaited<ReturnType<TestServer["newCompany"]>>;
    const ids: string[] = [];
    let newestFirst: string[];
    beforeAll(async () => {
      company = await t.newCompany("Listing Hooks Co");
      const created: { id: string; created_at: string }[] = [];
      for (const event of ["item.created", "task.created", "task.completed"]) {
        created.push((await t.request("POST", "/v1/ext/webhooks", { target_url: TARGET, event }, company.apiKey)).body);
      }
      ids.push(...created.map((s) => s.id));
      // created_at desc, then id desc (CONTRACT "Lists")
      newestFirst = created
        .sort((a, b) => b.created_at.localeCompare(a.created_at) || (b.id < a.id ? -1 : b.id > a.id ? 1 : 0))
        .map((s) => s.id);
    });

    it("lists the company's subscriptions newest first, without secrets", async () => {
      const res = await t.request("GET", "/v1/ext/webhooks", undefined, company.apiKey);
      expect(res.status).toBe(200);
      expect(res.body.map((s: { id: string }) => s.id)).toEqual(newestFirst);
      for (const subscription of res.body) {
        expect(Object.keys(subscription).sort()).toEqual(["created_at", "disabled_at", "disabled_reason", "event", "failing_since", "filter", "id", "next_attempt_at", "target_url"]);
        expect(subscription.filter).toBeNull();
      }
    });

    it("pages with limit and a Link header", async () => {
      const first = await t.request("GET", "/v1/ext/webhooks?limit=2", undefined, company.apiKey);
      expect(first.body).toHaveLength(2);
      const next = new URL(first.headers.get("link")!.match(/<([^>]+)>/)![1]!);
      const second = await t.request("GET", next.pathname + next.search, undefined, company.apiKey);
      expect([...first.body, ...second.body].map((s: { id: string }) => s.id).sort()).toEqual([...ids].sort());
      expect(second.headers.get("link")).toBeNull();
    });

    it("never lists another company's subscriptions", async () => {
      const res = await t.request("GET", "/v1/ext/webhooks", undefined, (await t.newKey(["hooks:manage"])).key);
      for (const id of ids) expect(res.body.map((s: { id: string }) => s.id)).not.toContain(id);
    });
  });

  describe("unsubscribing", () => {
    let key: string;
    beforeAll(async () => {
      key = (await t.newKey(["hooks:manage"])).key;
    });
    const subscribe = async () => (await t.request("POST", "/v1/ext/webhooks", { target_url: TARGET, event: "item.created" }, key)).body.id as string;

    it("answers 204 with no body, then 404 for the same id", async () => {
      const id = await subscribe();
      const first = await t.request("DELETE", `/v1/ext/webhooks/${id}`, undefined, key);
      expect(first.status).toBe(204);
      expect(first.body).toBeUndefined();
      const second = await t.request("DELETE", `/v1/ext/webhooks/${id}`, undefined, key);
      expect(second.status).toBe(404);
      expect(second.body.code).toBe("not_found");
    });

    it("answers 404 for an unknown id", async () => {
      const res = await t.request("DELETE", "/v1/ext/webhooks/does-not-exist", undefined, key);
      expect(res.status).toBe(404);
    });

    it("answers 404 for another company's subscription and keeps it", async () => {
      const other = await t.newCompany("Other Hooks Co");
      const id = (await t.request("POST", "/v1/ext/webhooks", { target_url: TARGET, event: "item.created" }, other.apiKey)).body.id;
      const res = await t.request("DELETE", `/v1/ext/webhooks/${id}`, undefined, key);
      expect(res.status).toBe(404);
      expect(await t.server.ctx.prisma.webhookSubscription.count({ where: { id } })).toBe(1);
    });

    it("requires the hooks:manage scope", async () => {
      const id = await subscribe();
      const res = await t.request("DELETE", `/v1/ext/webhooks/${id}`, undefined, (await t.newKey(["items:read"])).key);
      expect(res.status).toBe(403);
    });
  });

  describe("event fan-out", () => {
    let company: Awaited<ReturnType<TestServer["newCompany"]>>;
    const deliveriesFor = async (taskId: string) =>
      t.server.ctx.prisma.webhookDelivery.findMany({ where: { event: { resourceId: taskId } }, include: { event: true } });
    const createTask = async () =>
      (await t.request("POST", "/v1/ext/tasks", { title: "Hooked", due_at: "2026-03-01T09:00:00Z", assigned_to: "ada" }, company.apiKey)).body;
    beforeAll(async () => {
      company = await t.newCompany("Fan-out Co");
    });

    it("queues a delivery for the subscription when a subscribed event happens", async () => {
      const sub = (await t.request("POST", "/v1/ext/webhooks", { target_url: receiverUrl, event: "task.created" }, company.apiKey)).body;
      const task = await createTask();
      const deliveries = await deliveriesFor(task.task_id);
      expect(deliveries).toHaveLength(1);
      expect(deliveries[0]).toMatchObject({ subscriptionId: sub.id, event: { type: "task.created", payload: task } });
      await t.request("DELETE", `/v1/ext/webhooks/${sub.id}`, undefined, company.apiKey);
    });

    it("queues nothing for events the subscription did not name", async () => {
      const sub = (await t.request("POST", "/v1/ext/webhooks", { target_url: receiverUrl, event: "task.completed" }, company.apiKey)).body;
      const task = await createTask();
      expect(await deliveriesFor(task.task_id)).toHaveLength(0);
      await t.request("DELETE", `/v1/ext/webhooks/${sub.id}`, undefined, company.apiKey);
    });

    it("queues nothing more after unsubscribing", async () => {
      const sub = (await t.request("POST", "/v1/ext/webhooks", { target_url: receiverUrl, event: "task.created" }, company.apiKey)).body;
      expect((await t.request("DELETE", `/v1/ext/webhooks/${sub.id}`, undefined, company.apiKey)).status).toBe(204);
      const task = await createTask();
      expect(await deliveriesFor(task.task_id)).toHaveLength(0);
    });

    it("removes the subscription's deliveries, pending or not, when it is deleted", async () => {
      const sub = (await t.request("POST", "/v1/ext/webhooks", { target_url: receiverUrl, event: "task.created" }, company.apiKey)).body;
      const task = await createTask();
      expect(await deliveriesFor(task.task_id)).toHaveLength(1);
      await t.request("DELETE", `/v1/ext/webhooks/${sub.id}`, undefined, company.apiKey);
      expect(await t.server.ctx.prisma.webhookDelivery.count({ where: { subscriptionId: sub.id } })).toBe(0);
    });
  });

  describe("rotating the secret", () => {
    let key: string;
    beforeAll(async () => {
      key = (await t.newKey(["hooks:manage"])).key;
    });

    it("returns a new secret once and keeps the old one valid for 24 hours", async () => {
      const sub = (await t.request("POST", "/v1/ext/webhooks", { target_url: TARGET, event: "item.created" }, key)).body;
      const before = Date.now();
      const res = await t.request("POST", `/v1/ext/webhooks/${sub.id}/rotate-secret`, undefined, key);
      const after = Date.now();
      expect(res.status).toBe(200);
      expect(WebhookSubscriptionCreatedSchema.parse(res.body)).toEqual(res.body);
      expect(res.body).toMatchObject({ id: sub.id, target_url: TARGET, event: "item.created", created_at: sub.created_at });
      expect(res.body.secret).not.toBe(sub.secret);
      const row = await t.server.ctx.prisma.webhookSubscription.findUniqueOrThrow({ where: { id: sub.id } });
      expect(row.secret).toBe(res.body.secret);
      expect(row.previousSecret).toBe(sub.secret);
      const day = 24 * 60 * 60 * 1000;
      expect(row.previousSecretExpiresAt!.getTime()).toBeGreaterThanOrEqual(before + day);
      expect(row.previousSecretExpiresAt!.getTime()).toBeLessThanOrEqual(after + day);
    });

    it("answers 404 for another company's subscription and leaves its secret alone", async () => {
      const other = await t.newCompany("Rotate Other Co");
      const sub = (await t.request("POST", "/v1/ext/webhooks", { target_url: TARGET, event: "item.created" }, other.apiKey)).body;
      const res = await t.request("POST", `/v1/ext/webhooks/${sub.id}/rotate-secret`, undefined, key);
      expect(res.status).toBe(404);
      const row = await t.server.ctx.prisma.webhookSubscription.findUniqueOrThrow({ where: { id: sub.id } });
      expect(row.secret).toBe(sub.secret);
    });
  });

  describe("the per-company limit", () => {
    /** Gives the company the most subscriptions allowed (written directly), the first with `first`'s columns. */
    const fillToTheLimit = (companyId: string, first: { disabledAt?: Date; disabledReason?: string } = {}) =>
      t.server.ctx.prisma.webhookSubscription.createMany({
        data: Array.from({ length: MAX_SUBSCRIPTIONS_PER_COMPANY }, (_, i) => ({
          companyId,
          targetUrl: `${TARGET}/${i}`,
          events: ["item.created"],
          secret: "whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0",
          ...(i === 0 ? first : {}),
        })),
      });

    it(`refuses subscription number ${MAX_SUBSCRIPTIONS_PER_COMPANY + 1} as 422 and accepts again after a delete`, async () => {
      const company = await t.newCompany("Busy Hooks Co");
      await fillToTheLimit(company.companyId);
      const refused = await t.request("POST", "/v1/ext/webhooks", { target_url: TARGET, event: "item.created" }, company.apiKey);
      expect(refused.status).toBe(422);
      expect(refused.body.code).toBe("invalid_reference");
      expect(refused.body.detail).toContain("1,000");
      const one = await t.server.ctx.prisma.webhookSubscription.findFirstOrThrow({ where: { companyId: company.companyId } });
      expect((await t.request("DELETE", `/v1/ext/webhooks/${one.id}`, undefined, company.apiKey)).status).toBe(204);
      const accepted = await t.request("POST", "/v1/ext/webhooks", { target_url: TARGET, event: "item.created" }, company.apiKey);
      expect(accepted.status).toBe(201);
    });

    it("does not count disabled subscriptions, and GET /webhooks shows which are disabled and why", async () => {
      const company = await t.newCompany("Failing Hooks Co");
      const disabledAt = new Date("2026-11-20T08:00:00.000Z");
      // One of them is disabled: the company holds 999 that still count.
      await fillToTheLimit(company.companyId, { disabledAt, disabledReason: "no successful delivery for 3 days" });
      const accepted = await t.request("POST", "/v1/ext/webhooks", { target_url: TARGET, event: "item.created" }, company.apiKey);
      expect(accepted.status).toBe(201);
      expect(accepted.body).toMatchObject({ disabled_at: null, disabled_reason: null });
      const refused = await t.request("POST", "/v1/ext/webhooks", { target_url: TARGET, event: "item.created" }, company.apiKey);
      expect(refused.status).toBe(422);
      expect(refused.body.detail).toContain("not disabled");

      const listed: any[] = [];
      for (let path: string | null = "/v1/ext/webhooks?limit=500"; path; ) {
        const page = await t.request("GET", path, undefined, company.apiKey);
        expect(page.status).toBe(200);
        listed.push(...page.body);
        const next = page.headers.get("link")?.match(/<([^>]+)>;\s*rel="next"/)?.[1];
        path = next ? new URL(next, t.url).pathname + new URL(next, t.url).search : null;
      }
      expect(listed).toHaveLength(MAX_SUBSCRIPTIONS_PER_COMPANY + 1);
      const disabled = listed.filter((s) => s.disabled_at !== null);
      expect(disabled).toEqual([
        expect.objectContaining({ target_url: `${TARGET}/0`, disabled_at: disabledAt.toISOString(), disabled_reason: "no successful delivery for 3 days" }),
      ]);
      expect(listed.filter((s) => s.disabled_at === null).every((s) => s.disabled_reason === null)).toBe(true);
    });
  });
});
