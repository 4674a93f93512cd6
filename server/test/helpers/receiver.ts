/**
 * A local webhook receiver for delivery tests: a real HTTP server on 127.0.0.1 that records every request (method,
 * path, headers, raw body bytes, receive time, what was answered) and answers as the test programs it: any
 * status, headers and body, after a delay, or by destroying the connection without a response. Also fixtures that
 * write subscriptions and outbox events directly, the way the API's services do.
 */
import crypto from "node:crypto";
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { EventName } from "@stageline/shared";
import type { AppContext } from "../../src/context";
import { fanOutEvent, insertEvent } from "../../src/db/outbox";

export interface ReceivedRequest {
  /** 0-based position among all requests this receiver got. */
  index: number;
  method: string;
  /** Path and query, e.g. `/hooks/a`. */
  path: string;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  /** The raw body bytes. */
  body: Buffer;
  /** `Date.now()` when the body was complete. */
  receivedAt: number;
  /** The status sent, or null while unanswered or when no response reached the client (destroyed, client gone). */
  answered: number | null;
}

/** How to answer one request. Defaults: 200, empty body, at once. */
export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Answer only once this settles (a request held in flight until the test releases it). */
  hold?: Promise<unknown>;
  /** Close the connection without any response. */
  destroy?: boolean;
}

/** Decides the reply to a request (its `index` counts all requests of the receiver). */
export type Responder = (req: ReceivedRequest) => Reply | undefined;

export interface Receiver {
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  url: string;
  port: number;
  /** Every request so far, in arrival order. */
  requests: ReceivedRequest[];
  /** Replaces how requests are answered from now on. */
  respondWith(responder: Responder): void;
  /** Requests answered with a 2xx (the ones a sender saw succeed), optionally only for `path`. */
  accepted(path?: string): ReceivedRequest[];
  /** Resolves once `condition()` holds; rejects after `timeoutMs` with `what` in the message. */
  waitFor(condition: () => boolean, what: string, timeoutMs?: number): Promise<void>;
  /** Stops listening and drops every connection. */
  close(): Promise<void>;
}

/** Starts a receiver on 127.0.0.1 (`port` 0 = ephemeral; pass a port to come back on the same one). */
export async function startReceiver(options: { port?: number; responder?: Responder } = {}): Promise<Receiver> {
  let responder: Responder = options.responder ?? (() => undefined);
  const requests: ReceivedRequest[] = [];
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) headers[name] = Array.isArray(value) ? value.join(", ") : String(value);
      const received: ReceivedRequest = {
        index: requests.length,
        method: req.method ?? "",
        path: req.url ?? "",
        headers,
        body: Buffer.concat(chunks),
        receivedAt: Date.now(),
        answered: null,
      };
      requests.push(received);
      const reply = responder(received) ?? {};
      const answer = () => {
        if (reply.destroy) {
          req.socket.destroy();
          return;
        }
        if (req.socket.destroyed) return; // the client gave up (timeout): nothing reaches it
        const status = reply.status ?? 200;
        res.writeHead(status, { "content-type": "text/plain", ...reply.headers });
        res.end(reply.body ?? "");
        received.answered = status;
      };
      if (reply.hold) void reply.hold.finally(answer);
      else if (reply.delayMs) setTimeout(answer, reply.delayMs);
      else answer();
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    respondWith: (r) => {
      responder = r;
    },
    accepted: (path) => requests.filter((r) => r.answered !== null && r.answered >= 200 && r.answered < 300 && (path === undefined || r.path === path)),
    waitFor: async (condition, what, timeoutMs = 15_000) => {
      const deadline = Date.now() + timeoutMs;
      while (!condition()) {
        if (Date.now() > deadline) throw new Error(`receiver: timed out after ${timeoutMs} ms waiting for ${what} (${requests.length} requests so far)`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}

// ---- Fixtures: subscriptions and outbox events written straight to the database, as the API will write them ----

/** A fresh Standard Webhooks secret: `whsec_` + base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${crypto.randomBytes(32).toString("base64")}`;
}

/** Creates a subscription row for `companyId` (event `item.created` unless given). */
export async function createSubscription(
  ctx: AppContext,
  input: { companyId: string; targetUrl: string; event?: EventName; secret?: string; previousSecret?: string; previousSecretExpiresAt?: Date },
): Promise<{ id: string; secret: string; targetUrl: string }> {
  const secret = input.secret ?? newWebhookSecret();
  const row = await ctx.prisma.webhookSubscription.create({
    data: {
      companyId: input.companyId,
      targetUrl: input.targetUrl,
      events: [input.event ?? "item.created"],
      secret,
      previousSecret: input.previousSecret,
      previousSecretExpiresAt: input.previousSecretExpiresAt,
    },
  });
  return { id: row.id, secret, targetUrl: row.targetUrl };
}

/**
 * Records `count` events of `type` for `companyId`, each in its own transaction through the outbox (as a service
 * does), and wakes the dispatcher after each commit.
 * @returns the event ids in commit (seq) order and the payloads as stored.
 */
export async function emitEvents(
  ctx: AppContext,
  companyId: string,
  count: number,
  type: EventName = "item.created",
): Promise<{ id: string; payload: Record<string, unknown> }[]> {
  const events = [];
  for (let i = 0; i < count; i++) {
    const payload = { item_id: `item-${i}`, name: `Deal ${i}`, deal_value: i * 100, note: "ünïcødé ✓" };
    const eventId = await ctx.prisma.$transaction(async (tx) => {
      const row = await insertEvent(tx, { companyId, type, resourceId: payload.item_id, payload });
      await fanOutEvent(tx, { id: row.id, seq: row.seq, companyId, type });
      return row.id;
    });
    ctx.eventsCommitted();
    events.push({ id: eventId, payload });
  }
  return events;
}

/**
 * As `emitEvents`, but the `count` events commit together in ONE transaction: a test whose timing assumes all of them
 * are queued before the dispatcher's first attempt (a short retry window) holds however slowly the machine inserts.
 */
export async function emitEventsTogether(ctx: AppContext, companyId: string, count: number): Promise<{ id: string }[]> {
  const ids = await ctx.prisma.$transaction(async (tx) => {
    const out: string[] = [];
    for (let i = 0; i < count; i++) {
      const payload = { item_id: `item-${i}`, name: `Deal ${i}` };
      const row = await insertEvent(tx, { companyId, type: "item.created", resourceId: payload.item_id, payload });
      await fanOutEvent(tx, { id: row.id, seq: row.seq, companyId, type: "item.created" });
      out.push(row.id);
    }
    return out;
  });
  ctx.eventsCommitted();
  return ids.map((id) => ({ id }));
}

/** Polls `condition` every 20 ms until it holds; fails after `timeoutMs` naming `what`. */
export async function waitUntil(condition: () => Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
