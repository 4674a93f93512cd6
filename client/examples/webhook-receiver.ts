/**
 * Example: an Express server that receives Stageline webhooks and verifies each one.
 *
 *   STAGELINE_WEBHOOK_SECRET=whsec_... PORT=4000 npx tsx webhook-receiver.ts
 *
 * Subscribe its URL first (the answer carries the secret, shown once), e.g. with the client:
 *   await client.webhooks.subscribe({ target_url: "https://your-host.example/webhooks/stageline", event: "item.created" })
 *
 * POST /webhooks/stageline reads the body raw (`express.raw`: the signature covers the exact bytes, so it must be
 * verified before any JSON parsing) and checks it with `verifyWebhook` (Standard Webhooks: HMAC-SHA256 over
 * `id.timestamp.body`, timestamp within 5 minutes). Forged, tampered, unsigned or stale deliveries get 401 and are
 * not processed; a verified one gets 204 and is printed as one JSON line on stdout:
 *   {"id":"msg_...","event":"item.created","timestamp":"2026-...","data":{...the item...}}
 * Delivery is at least once, so a redelivered id (the same `webhook-id`) is acknowledged again but printed only once
 * (the last 10,000 ids are remembered).
 *
 * STAGELINE_WEBHOOK_SECRET may list several secrets separated by commas: during a secret rotation
 * (`client.webhooks.rotateSecret`) deliveries signed with the old or the new one are both accepted.
 * HOST (default 127.0.0.1) and PORT (default 4000; 0 picks a free port) say where to listen; the script prints
 * `Listening on http://<host>:<port>/webhooks/stageline` once it does. Exit status 2: no secret.
 */
import type { AddressInfo } from "node:net";
import express, { type Express } from "express";
import { verifyWebhook, WebhookVerificationError, type VerifiedWebhook } from "@stageline/client";
import { UsageError } from "./lib/connect";

/** The path deliveries are posted to. */
export const WEBHOOK_PATH = "/webhooks/stageline";
/** How many delivery ids are remembered to drop repeats. */
const REMEMBERED_IDS = 10_000;

/** Ids seen lately, oldest first (a Set keeps insertion order), at most `limit` of them. */
class RecentIds {
  private readonly ids = new Set<string>();
  constructor(private readonly limit: number) {}

  /** Records `id`; false when it was already there. */
  add(id: string): boolean {
    if (this.ids.has(id)) return false;
    this.ids.add(id);
    if (this.ids.size > this.limit) this.ids.delete(this.ids.values().next().value!);
    return true;
  }
}

/**
 * The receiver app: verifies every delivery to WEBHOOK_PATH with `secrets` and hands each verified, not yet seen
 * one to `onEvent`.
 * @param secrets one `whsec_...` secret or several (rotation).
 */
export function receiverApp(secrets: string | string[], onEvent: (event: VerifiedWebhook) => void): Express {
  const app = express();
  const seen = new RecentIds(REMEMBERED_IDS);
  app.post(WEBHOOK_PATH, express.raw({ type: "*/*", limit: "1mb" }), (req, res) => {
    let event: VerifiedWebhook;
    try {
      event = verifyWebhook(req.body as Buffer, req.headers, secrets);
    } catch (err) {
      if (!(err instanceof WebhookVerificationError)) throw err;
      res.status(401).json({ error: err.message });
      return;
    }
    if (seen.add(event.id)) onEvent(event);
    res.status(204).end();
  });
  return app;
}

function main(): void {
  const secrets = (process.env.STAGELINE_WEBHOOK_SECRET ?? "").split(",").map((s) => s.trim()).filter(Boolean);
  if (!secrets.length) throw new UsageError("Set STAGELINE_WEBHOOK_SECRET to the subscription's secret (whsec_...; several separated by commas).");
  const host = process.env.HOST || "127.0.0.1";
  const port = Number(process.env.PORT ?? 4000);
  const app = receiverApp(secrets, (event) => process.stdout.write(`${JSON.stringify(event)}\n`));
  const server = app.listen(port, host, () => {
    const { port: bound } = server.address() as AddressInfo;
    process.stdout.write(`Listening on http://${host}:${bound}${WEBHOOK_PATH}\n`);
  });
  const stop = () => server.close(() => process.exit(0));
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

if (require.main === module) {
  try {
    main();
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exitCode = err instanceof UsageError ? 2 : 1;
  }
}
