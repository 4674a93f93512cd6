/**
 * A local webhook receiver for the delivery benchmark (issue #4, item 5): answers every POST with 200 at once,
 * records when each delivery arrived (high-resolution wall clock, same clock as the API calls made by this process),
 * checks its Standard Webhooks signature (`webhook-signature: v1,<base64 HMAC-SHA256 of id.timestamp.body>`, key =
 * the base64-decoded part of the `whsec_` secret) and counts duplicates by `webhook-id` (delivery is at least once).
 */
import crypto from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";

/** Wall-clock milliseconds with sub-millisecond resolution. */
export const nowMs = () => performance.timeOrigin + performance.now();

export interface ReceivedDelivery {
  /** Path the delivery was sent to (one per subscription). */
  path: string;
  webhookId: string;
  receivedAt: number;
  itemId: string | null;
  /** The delivered item's `created_at` (ISO), when present. */
  createdAt: string | null;
}

export class WebhookReceiver {
  readonly deliveries: ReceivedDelivery[] = [];
  duplicates = 0;
  badSignatures = 0;
  unsigned = 0;
  private readonly seen = new Set<string>();
  private readonly secrets = new Map<string, Buffer>();
  private waiters: { count: number; resolve: () => void }[] = [];
  private server?: http.Server;
  url = "";

  /** Starts listening on 127.0.0.1 (ephemeral port). */
  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const receivedAt = nowMs();
        res.writeHead(200, { "content-type": "text/plain" }).end("ok");
        this.record(req, Buffer.concat(chunks).toString("utf8"), receivedAt);
      });
    });
    this.server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Registers the signing secret of the subscription that delivers to `path`. */
  setSecret(path: string, secret: string): void {
    this.secrets.set(path, Buffer.from(secret.replace(/^whsec_/, ""), "base64"));
  }

  private record(req: http.IncomingMessage, body: string, receivedAt: number): void {
    const path = req.url ?? "/";
    const webhookId = String(req.headers["webhook-id"] ?? "");
    const key = `${path} ${webhookId}`;
    if (this.seen.has(key)) {
      this.duplicates++;
      return;
    }
    this.seen.add(key);
    this.checkSignature(path, webhookId, String(req.headers["webhook-timestamp"] ?? ""), String(req.headers["webhook-signature"] ?? ""), body);
    let itemId: string | null = null;
    let createdAt: string | null = null;
    try {
      const parsed = JSON.parse(body) as { item_id?: string; created_at?: string };
      itemId = parsed.item_id ?? null;
      createdAt = parsed.created_at ?? null;
    } catch {
      /* not JSON: recorded without an item */
    }
    this.deliveries.push({ path, webhookId, receivedAt, itemId, createdAt });
    const n = this.deliveries.length;
    this.waiters = this.waiters.filter((w) => {
      if (n < w.count) return true;
      w.resolve();
      return false;
    });
  }

  private checkSignature(path: string, id: string, timestamp: string, header: string, body: string): void {
    const key = this.secrets.get(path);
    if (!key) return;
    if (!header) {
      this.unsigned++;
      return;
    }
    const expected = crypto.createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64");
    const ok = header.split(" ").some((part) => part.startsWith("v1,") && part.slice(3) === expected);
    if (!ok) this.badSignatures++;
  }

  /** Resolves true once `count` unique deliveries have arrived in total, false after `timeoutMs`. */
  waitForTotal(count: number, timeoutMs: number): Promise<boolean> {
    if (this.deliveries.length >= count) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(false);
      }, timeoutMs);
      const waiter = {
        count,
        resolve: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      this.waiters.push(waiter);
    });
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }
}
