/** What every router and service receives: the database, configuration, logger, metrics and the outbox wake-up. */
import type { Logger } from "pino";
import type { Config } from "./config/config";
import type { Database } from "./db/database";
import type { PrismaClient } from "./generated/prisma/client";
import type { AppMetrics } from "./observability/metrics";
import type { RequestLogWriter } from "./services/request-log/writer";

export interface AppContext {
  db: Database;
  prisma: PrismaClient;
  config: Config;
  logger: Logger;
  /** Called after a transaction that wrote outbox events commits: wakes the webhook dispatcher at once. */
  eventsCommitted: () => void;
  /** Token that authorises the admin API (`/admin`, used by the admin CLI while the server runs). */
  adminToken: string;
  /** Requests per API key per rate-limit window (the contract's 60 unless raised for benchmarks via RATE_LIMIT_PER_MINUTE; the window is `config.rateLimitWindowSeconds`). */
  rateLimit: number;
  /**
   * This server's Prometheus metrics (observability/metrics.ts). `metrics.delivery` is the delivery engine's recorder
   * (`attempt`, `delivered`, `claim`, `purged`); it counts whether or not the metrics listener is on.
   */
  metrics: AppMetrics;
  /** The request log's writer (services/request-log/writer.ts): queues one entry per request or MCP tool call. */
  requestLog: RequestLogWriter;
  /**
   * The server's public origin (`config.publicUrl`, else the URL it is reached at from this machine once it listens),
   * e.g. `http://127.0.0.1:41234`: the OAuth issuer and the base of the resource identifiers (oauth/resources.ts).
   * @throws Error when called before the server listens and PUBLIC_URL is unset.
   */
  publicOrigin: () => string;
}
