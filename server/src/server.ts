/**
 * Starts a complete Stageline server: opens the database (PGlite or PostgreSQL), applies migrations, seeds the
 * demo company on an empty database, starts the webhook dispatcher, the purge of expired idempotency keys and the
 * retention job of the webhook delivery log, and listens (and, with `METRICS_PORT`, starts the Prometheus metrics
 * listener). Used by `main.ts`, the tests and the benchmarks alike.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import type { AddressInfo } from "node:net";
import path from "node:path";
import http, { type Server } from "node:http";
import { loadConfig, type Config } from "./config/config";
import { createApp } from "./app";
import type { AppContext } from "./context";
import { openDatabase, type Database } from "./db/database";
import { applyMigrations } from "./db/migrations";
import { createLogger } from "./logger";
import { createMetrics } from "./observability/metrics";
import { startMetricsListener, type MetricsListener } from "./observability/metrics-listener";
import { seedDemoIfEmpty } from "./seed/demo";
import { startIdempotencyPurge } from "./services/idempotency";
import { WebhookDispatcher } from "./webhooks/dispatcher";
import { startOAuthPurge } from "./oauth/purge";
import { startRequestLogRetention } from "./services/request-log/retention";
import { startRequestLogWriter, type RequestLogWriter } from "./services/request-log/writer";
import { startWebhookRetention, type RetentionJob } from "./webhooks/retention";
import { webhookRetentionPolicy } from "./webhooks/retention-policy";
import { RATE_LIMIT } from "@stageline/shared";

export interface RunningServer {
  /** Base URL to reach it from this machine, e.g. `http://127.0.0.1:41234` (loopback when it listens on every interface). */
  url: string;
  /**
   * The address it really listens on, as a URL: `http://127.0.0.1:3000`, or `http://0.0.0.0:3000` / `http://[::]:3000`
   * for every interface (main.ts prints it in the start-up banner).
   */
  listenUrl: string;
  port: number;
  ctx: AppContext;
  db: Database;
  dispatcher: WebhookDispatcher;
  /** The retention job of the webhook delivery log (webhooks/retention.ts); `runNow()` runs it at once. */
  webhookRetention: RetentionJob;
  /** The metrics listener's scrape URL (`http://127.0.0.1:9464/metrics`), or null when `METRICS_PORT` is unset. */
  metricsUrl: string | null;
  /** The demo key when this start seeded the demo company, else null. */
  demoApiKey: string | null;
  /** The demo console owner's email and password when this start seeded the demo company, else null. */
  demoUser: { email: string; password: string } | null;
  /** Stops accepting requests (and scrapes), lets in-flight deliveries finish (or releases them), closes the database. */
  close(): Promise<void>;
}

/** Path of the admin handshake file the CLI reads while the server runs on an embedded database. */
export function adminHandshakePath(dataDir: string): string {
  return path.resolve(dataDir, "admin.json");
}

/**
 * Starts the server. `overrides` replace values read from the environment (tests pass `port: 0`).
 * @throws when the database cannot be opened or a migration fails.
 */
export async function startServer(overrides: Partial<Config> = {}): Promise<RunningServer> {
  const config: Config = { ...loadConfig(), ...overrides };
  const logger = createLogger(config.logLevel);
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, template: config.databaseTemplate });
  let dispatcher: WebhookDispatcher | undefined;
  let metricsListener: MetricsListener | undefined;
  let requestLog: RequestLogWriter | undefined;
  try {
    const applied = await applyMigrations(db);
    if (applied.length) logger.info({ applied }, "migrations applied");
    let listeningOrigin: string | undefined;
    const metrics = createMetrics({ prisma: db.prisma, logger, processMetrics: config.metricsPort !== undefined });
    requestLog = startRequestLogWriter(db.sql, metrics.requestLog, logger);
    const ctx: AppContext = {
      db,
      prisma: db.prisma,
      config,
      logger,
      eventsCommitted: () => dispatcher?.wake(),
      adminToken: crypto.randomBytes(24).toString("base64url"),
      rateLimit: Number(process.env.RATE_LIMIT_PER_MINUTE ?? RATE_LIMIT.limit),
      metrics,
      requestLog,
      publicOrigin: () => {
        const origin = config.publicUrl ?? listeningOrigin;
        if (!origin) throw new Error("publicOrigin() called before the server listens (set PUBLIC_URL)");
        return origin;
      },
    };
    const demo = config.seedDemo ? await seedDemoIfEmpty(ctx) : null;
    dispatcher = new WebhookDispatcher(ctx);
    if (config.metricsPort !== undefined) {
      metricsListener = await startMetricsListener(ctx.metrics.registry, { port: config.metricsPort, host: config.metricsHost, logger });
    }
    const app = createApp(ctx);
    const server: Server = http.createServer(
      {
        // Longer than clients' own idle timeouts (undici: 4 s; load balancers: 60 s), so the client always closes an
        // idle connection first and never sends a request into one the server is closing (ECONNRESET).
        keepAliveTimeout: 65_000,
        headersTimeout: Math.min(config.headersTimeoutMs, config.bodyTimeoutMs + 5_000),
        // A backstop behind bodyTimeout (http/body-timeout.ts), which answers slow bodies as problem+json first.
        requestTimeout: config.bodyTimeoutMs + 5_000,
        // How often Node checks the two timeouts above (default 30 s, which would let a slow client stay that long).
        connectionsCheckingInterval: 1_000,
      },
      app,
    );
    server.maxConnections = config.maxConnections;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(config.port, config.host, () => {
        server.off("error", reject);
        resolve();
      });
    });
    dispatcher.start();
    const purge = startIdempotencyPurge(db.prisma, (err) => logger.warn({ err }, "purging expired idempotency keys failed"));
    const oauthPurge = startOAuthPurge(db.sql, (err) => logger.warn({ err }, "purging expired OAuth records failed"));
    const requestLogRetention = startRequestLogRetention(db.sql, config.requestLogRetentionDays, (err) =>
      logger.warn({ err }, "deleting old request log entries failed"),
    );
    const webhookRetention = startWebhookRetention(db.prisma, webhookRetentionPolicy(config.webhookRetentionDays), {
      onPurged: (kind, n) => ctx.metrics.delivery.purged(kind, n),
      onSummary: (purged, cutoff) => logger.info({ purged, cutoff: cutoff.toISOString() }, "webhook delivery log: old entries deleted"),
      onError: (err) => logger.warn({ err }, "deleting old webhook deliveries failed"),
    });
    const address = server.address() as AddressInfo;
    const port = address.port;
    const listenUrl = `http://${address.family === "IPv6" ? `[${address.address}]` : address.address}:${port}`;
    const host = config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host;
    const url = `http://${host}:${port}`;
    listeningOrigin = url;
    const handshake = db.kind === "pglite" && config.dataDir !== "memory://" ? adminHandshakePath(config.dataDir) : null;
    if (handshake) {
      fs.writeFileSync(handshake, JSON.stringify({ pid: process.pid, url, token: ctx.adminToken }), { mode: 0o600 });
    }
    logger.info({ url, database: db.kind, metrics: metricsListener?.url ?? null }, "stageline listening");
    let closing: Promise<void> | undefined;
    const close = () =>
      (closing ??= (async () => {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
        });
        await metricsListener?.close();
        await dispatcher!.stop();
        await purge.stop();
        await oauthPurge.stop();
        await requestLogRetention.stop();
        await webhookRetention.stop();
        // What the last requests queued, written before the database closes.
        await requestLog!.close();
        if (handshake) fs.rmSync(handshake, { force: true });
        await db.close();
      })());
    return {
      url,
      listenUrl,
      port,
      ctx,
      db,
      dispatcher,
      webhookRetention,
      metricsUrl: metricsListener?.url ?? null,
      demoApiKey: demo?.apiKey ?? null,
      demoUser: demo?.user ?? null,
      close,
    };
  } catch (err) {
    await metricsListener?.close();
    await requestLog?.close();
    await dispatcher?.stop().catch(() => undefined);
    await db.close().catch(() => undefined);
    throw err;
  }
}
