/**
 * The pure rules behind webhook delivery: which answers are retried, how long to wait, when to give up
 * (CONTRACT.md "Events and deliveries"), which addresses production never contacts, and the signature format.
 */
import { Webhook } from "standardwebhooks";
import { uuidv7 } from "../src/db/webhook-dispatch";
import { isPublicAddress } from "../src/webhooks/address-kind";
import { classifyResponse, DEFAULT_RETRY_POLICY, nextRetryDelayMs, parseRetryAfterMs, scheduleRetry } from "../src/webhooks/retry-policy";
import { signDelivery } from "../src/webhooks/signing";
import { newWebhookSecret } from "./helpers/receiver";

describe("retry policy", () => {
  it("counts 2xx as delivered, 410 as unsubscribe, and retries only network errors, 408, 429 and 5xx", () => {
    expect([200, 201, 204, 299].map(classifyResponse)).toEqual(["succeeded", "succeeded", "succeeded", "succeeded"]);
    expect(classifyResponse(410)).toBe("gone");
    expect([null, 408, 429, 500, 502, 503, 504].map(classifyResponse)).toEqual(Array(7).fill("retry"));
    expect([301, 302, 307, 400, 401, 403, 404, 405, 413, 422].map(classifyResponse)).toEqual(Array(10).fill("failed"));
  });

  it("backs off exponentially with full jitter: a random delay below a bound that doubles per attempt up to an hour", () => {
    expect(nextRetryDelayMs(1, () => 0)).toBe(0);
    expect(nextRetryDelayMs(1, () => 0.999999)).toBe(999);
    expect(nextRetryDelayMs(2, () => 0.5)).toBe(1_000);
    expect(nextRetryDelayMs(5, () => 0.5)).toBe(8_000);
    expect(nextRetryDelayMs(13, () => 0.5)).toBe(1_800_000);
    expect(nextRetryDelayMs(1_000, () => 0.999999)).toBeLessThan(3_600_000);
  });

  it("reads Retry-After as seconds or an HTTP date, and ignores anything else", () => {
    const now = Date.parse("2026-11-21T10:00:00Z");
    expect(parseRetryAfterMs("120", now)).toBe(120_000);
    expect(parseRetryAfterMs("Sat, 21 Nov 2026 10:00:30 GMT", now)).toBe(30_000);
    expect(parseRetryAfterMs("Sat, 21 Nov 2026 09:00:00 GMT", now)).toBe(0);
    for (const junk of [null, undefined, "", "-5", "1.5", "soon"]) expect(parseRetryAfterMs(junk, now)).toBeNull();
  });

  it("honours Retry-After within one second and one hour instead of the backoff", () => {
    const at = (retryAfterMs: number) =>
      scheduleRetry({ attempt: 1, createdAt: new Date(0), now: new Date(1_000), retryAfterMs }, () => 0).nextAttemptAt!.getTime() - 1_000;
    expect(at(30_000)).toBe(30_000);
    expect(at(0)).toBe(DEFAULT_RETRY_POLICY.baseMs);
    expect(at(86_400_000)).toBe(DEFAULT_RETRY_POLICY.maxStepMs);
  });

  it("retries until three days after creation, with a last attempt exactly at that deadline, then gives up", () => {
    const created = new Date("2026-11-21T00:00:00Z");
    const deadline = created.getTime() + 3 * 86_400_000;
    const late = scheduleRetry({ attempt: 40, createdAt: created, now: new Date(deadline - 60_000), retryAfterMs: null }, () => 0.99);
    expect(late).toEqual({ state: "pending", nextAttemptAt: new Date(deadline) });
    expect(scheduleRetry({ attempt: 41, createdAt: created, now: new Date(deadline), retryAfterMs: null }, () => 0.5)).toEqual({ state: "failed", nextAttemptAt: null });
  });

  it("follows an attempt that started before the deadline and failed after it with a final attempt at once", () => {
    const created = new Date("2026-01-01T00:00:00Z");
    const deadline = created.getTime() + DEFAULT_RETRY_POLICY.windowMs;
    const slow = { attempt: 41, createdAt: created, attemptedAt: new Date(deadline - 40), now: new Date(deadline + 9_960), retryAfterMs: null };
    expect(scheduleRetry(slow, () => 0.5)).toEqual({ state: "pending", nextAttemptAt: new Date(deadline) });
    const last = { ...slow, attemptedAt: new Date(deadline + 1), now: new Date(deadline + 20) };
    expect(scheduleRetry(last, () => 0.5)).toEqual({ state: "failed", nextAttemptAt: null });
  });
});

describe("production address guard", () => {
  it("accepts public IPv4 and IPv6 addresses", () => {
    for (const ip of ["8.8.8.8", "1.1.1.1", "93.184.216.34", "2606:4700:4700::1111", "2a00:1450:4001::200e"]) expect(isPublicAddress(ip)).toBe(true);
  });

  it("rejects loopback, private, link-local, CGNAT, unspecified, multicast and IPv4-embedding IPv6 forms", () => {
    const blocked = [
      "127.0.0.1", "127.8.9.1", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254", "100.64.0.1",
      "0.0.0.0", "224.0.0.1", "255.255.255.255", "::", "::1", "fc00::1", "fd12::1", "fe80::1", "ff02::1",
      "::ffff:127.0.0.1", "::ffff:7f00:1", "::ffff:10.0.0.1", "64:ff9b::a00:1", "2002:a00:1::1", "not-an-ip",
    ];
    for (const ip of blocked) expect([ip, isPublicAddress(ip)]).toEqual([ip, false]);
  });
});

describe("delivery signature", () => {
  const body = JSON.stringify({ item_id: "i1", name: "Deal ✓" });
  const at = new Date();

  it("is a Standard Webhooks v1 signature over id.timestamp.body that the reference library verifies", () => {
    const secret = newWebhookSecret();
    const headers = signDelivery("evt_1", at, body, [secret]);
    expect(headers["webhook-id"]).toBe("evt_1");
    expect(headers["webhook-timestamp"]).toBe(String(Math.floor(at.getTime() / 1000)));
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(secret).verify(body + " ", headers)).toThrow();
  });

  it("carries one signature per secret, so either secret verifies during a rotation", () => {
    const [current, previous] = [newWebhookSecret(), newWebhookSecret()];
    const headers = signDelivery("evt_2", at, body, [current, previous]);
    expect(headers["webhook-signature"].split(" ").map((s) => s.slice(0, 3))).toEqual(["v1,", "v1,"]);
    expect(() => new Webhook(current).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(previous).verify(body, headers)).not.toThrow();
  });
});

describe("delivery log ids", () => {
  it("are version-7 UUIDs that sort by creation time", () => {
    const a = uuidv7(1_700_000_000_000);
    const b = uuidv7(1_700_000_000_001);
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(a < b).toBe(true);
  });
});
