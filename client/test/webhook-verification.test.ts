/**
 * CONTRACT "Client library" + "Events and deliveries": verifyWebhook against signatures made the way the server
 * makes them (the `standardwebhooks` library the server signs with: `v1,` + base64 HMAC-SHA256 of
 * `id.timestamp.body`, keyed with the decoded `whsec_` secret; one signature per secret during a rotation).
 */
import crypto from "node:crypto";
import { Webhook } from "standardwebhooks";
import { verifyWebhook, WebhookVerificationError } from "../src";

const SECRET = `whsec_${crypto.randomBytes(32).toString("base64")}`;
const OLD_SECRET = `whsec_${crypto.randomBytes(24).toString("base64")}`;
const BODY = JSON.stringify({ item_id: "i1", name: "Acme deal", changed_fields: ["stage"] });
const NOW = new Date("2026-03-01T09:30:00Z");

/** Headers of a delivery signed at `at` with `secrets` (a record, as Node/Express gives them). */
function delivery(at: Date = NOW, secrets: string[] = [SECRET], body = BODY): Record<string, string> {
  return {
    "webhook-id": "evt_1",
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": secrets.map((s) => new Webhook(s).sign("evt_1", at, body)).join(" "),
    "x-webhook-event": "item.updated",
  };
}

/** The WebhookVerificationError `fn` throws. */
function failure(fn: () => unknown): WebhookVerificationError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(WebhookVerificationError);
    return err as WebhookVerificationError;
  }
  throw new Error("verifyWebhook did not throw");
}

it("accepts a genuine delivery and returns id, event, timestamp and the parsed body", () => {
  expect(verifyWebhook(BODY, delivery(), SECRET, { now: NOW })).toEqual({
    id: "evt_1",
    event: "item.updated",
    timestamp: NOW,
    data: JSON.parse(BODY),
  });
});

it("takes the body as a string, a Buffer or a Uint8Array", () => {
  const bytes = Buffer.from(BODY, "utf8");
  const view = new Uint8Array(new ArrayBuffer(bytes.length + 8), 4, bytes.length);
  view.set(bytes);
  for (const body of [BODY, bytes, view]) expect(verifyWebhook(body, delivery(), SECRET, { now: NOW }).id).toBe("evt_1");
});

it("takes a Headers object and a record with any case or array values", () => {
  const h = delivery();
  expect(verifyWebhook(BODY, new Headers(h), SECRET, { now: NOW }).event).toBe("item.updated");
  const shouting = Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toUpperCase(), [v]]));
  expect(verifyWebhook(BODY, shouting, SECRET, { now: NOW }).id).toBe("evt_1");
});

it("refuses a forged signature, a changed body and the wrong secret", () => {
  const forged = { ...delivery(), "webhook-signature": `v1,${crypto.randomBytes(32).toString("base64")}` };
  expect(failure(() => verifyWebhook(BODY, forged, SECRET, { now: NOW })).reason).toBe("no_matching_signature");
  expect(failure(() => verifyWebhook(BODY.replace("Acme", "Evil"), delivery(), SECRET, { now: NOW })).reason).toBe("no_matching_signature");
  expect(failure(() => verifyWebhook(BODY, delivery(), OLD_SECRET, { now: NOW })).reason).toBe("no_matching_signature");
  const otherScheme = { ...delivery(), "webhook-signature": delivery()["webhook-signature"]!.replace("v1,", "v2,") };
  expect(failure(() => verifyWebhook(BODY, otherScheme, SECRET, { now: NOW })).reason).toBe("no_matching_signature");
});

it("refuses stale and future timestamps beyond the tolerance, both ways, and accepts them within", () => {
  const old = new Date(NOW.getTime() - 301_000);
  const future = new Date(NOW.getTime() + 301_000);
  expect(failure(() => verifyWebhook(BODY, delivery(old), SECRET, { now: NOW })).reason).toBe("timestamp_too_old");
  expect(failure(() => verifyWebhook(BODY, delivery(future), SECRET, { now: NOW })).reason).toBe("timestamp_too_new");
  expect(verifyWebhook(BODY, delivery(old), SECRET, { now: NOW, toleranceSeconds: 600 }).id).toBe("evt_1");
  expect(verifyWebhook(BODY, delivery(new Date(NOW.getTime() - 299_000)), SECRET, { now: NOW }).id).toBe("evt_1");
});

it("uses the current time by default", () => {
  expect(verifyWebhook(BODY, delivery(new Date()), SECRET).id).toBe("evt_1");
  expect(failure(() => verifyWebhook(BODY, delivery(NOW), SECRET)).reason).toBe("timestamp_too_old");
});

it("verifies during rotations: the server signing with both secrets, or the receiver holding both", () => {
  expect(verifyWebhook(BODY, delivery(NOW, [SECRET, OLD_SECRET]), OLD_SECRET, { now: NOW }).id).toBe("evt_1");
  expect(verifyWebhook(BODY, delivery(NOW, [SECRET, OLD_SECRET]), SECRET, { now: NOW }).id).toBe("evt_1");
  expect(verifyWebhook(BODY, delivery(NOW, [OLD_SECRET]), [SECRET, OLD_SECRET], { now: NOW }).id).toBe("evt_1");
});

it.each(["webhook-id", "webhook-timestamp", "webhook-signature"])("refuses a delivery without %s", (name) => {
  const h: Record<string, string> = { ...delivery() };
  delete h[name];
  expect(failure(() => verifyWebhook(BODY, h, SECRET, { now: NOW })).reason).toBe("missing_header");
});

it("refuses a malformed timestamp", () => {
  expect(failure(() => verifyWebhook(BODY, { ...delivery(), "webhook-timestamp": "soon" }, SECRET, { now: NOW })).reason).toBe("invalid_timestamp");
});

it("throws TypeError for a malformed secret or none, whatever the order of the secrets", () => {
  expect(() => verifyWebhook(BODY, delivery(), "whsec_not base64!", { now: NOW })).toThrow(TypeError);
  expect(() => verifyWebhook(BODY, delivery(), [], { now: NOW })).toThrow(TypeError);
  // The valid secret would verify; a malformed one beside it throws before or after it alike.
  expect(() => verifyWebhook(BODY, delivery(), [SECRET, "whsec_not base64!"], { now: NOW })).toThrow(TypeError);
  expect(() => verifyWebhook(BODY, delivery(), ["whsec_not base64!", SECRET], { now: NOW })).toThrow(TypeError);
});
