/**
 * Server configuration, read once from the environment.
 *
 * | variable      | default                | meaning                                                         |
 * |---------------|------------------------|-----------------------------------------------------------------|
 * | PORT          | 3000                   | HTTP port (0 = ephemeral)                                       |
 * | HOST          | 0.0.0.0 in production, | listen address (development and test: this machine only)        |
 *   |               | else 127.0.0.1         |                                                                 |
 * | DATABASE_URL  | unset                  | `postgresql://...` (optional `?schema=name`); unset = PGlite    |
 * | DATA_DIR      | ./data                 | PGlite data directory and the admin handshake file              |
 * | NODE_ENV      | development            | production / development / test (CONTRACT.md: target URL rules) |
 * | LOG_LEVEL     | info (silent in test)  | pino level                                                      |
 * | SEED_DEMO     | true                   | seed the demo company on an empty database                      |
 * | TRUST_PROXY   | loopback               | proxies trusted for client IP / https (config/trust-proxy.ts)   |
 * | WEBHOOK_RETENTION_DAYS | 30            | days the webhook delivery log is kept (webhooks/retention-policy.ts) |
 * | REQUEST_LOG_RETENTION_DAYS | 14        | days the request log is kept (services/request-log/retention.ts) |
 * | METRICS_PORT  | unset (off)            | port of the Prometheus metrics listener (`GET /metrics`)        |
 * | METRICS_HOST  | 127.0.0.1              | listen address of the metrics listener                          |
 * | PUBLIC_URL    | the URL it listens on  | public origin (https://stageline.example.com): OAuth issuer and resource identifiers |
 * | RATE_LIMIT_WINDOW_SECONDS | 60         | length of the per-key rate-limit window (tests, operators)      |
 */
import { RATE_LIMIT } from "@stageline/shared";
import { parseTrustProxy } from "./trust-proxy";
import type { EndpointLimit, LimitedEndpoint } from "../oauth/endpoint-limits";

/** WEBHOOK_RETENTION_DAYS when unset: 30 days, like Stripe's event log (CONTRACT "Events and deliveries"). */
export const DEFAULT_WEBHOOK_RETENTION_DAYS = 30;
/** REQUEST_LOG_RETENTION_DAYS when unset: 14 days (CONTRACT "Request ids and the request log"). */
export const DEFAULT_REQUEST_LOG_RETENTION_DAYS = 14;
/** The largest REQUEST_LOG_RETENTION_DAYS accepted: about a year. */
export const MAX_REQUEST_LOG_RETENTION_DAYS = 400;
/** The largest WEBHOOK_RETENTION_DAYS accepted: 10 years (keeps the cutoff a valid date however it is computed). */
export const MAX_WEBHOOK_RETENTION_DAYS = 3_650;

/** The longest RATE_LIMIT_WINDOW_SECONDS accepted: one hour. */
export const MAX_RATE_LIMIT_WINDOW_SECONDS = 3_600;

export type Mode = "production" | "development" | "test";

export interface Config {
  port: number;
  host: string;
  /** PostgreSQL connection string, or undefined for the embedded PGlite database. */
  databaseUrl?: string;
  /** PGlite data directory; `memory://` keeps the database in memory (tests). */
  dataDir: string;
  mode: Mode;
  logLevel: string;
  seedDemo: boolean;
  /** Express `trust proxy`: which proxies' X-Forwarded-* headers are believed (TRUST_PROXY). */
  trustProxy: boolean | number | string;
  /** A request body must arrive completely within this many ms of the request's start, else 408 (REQUEST_BODY_TIMEOUT_MS). */
  bodyTimeoutMs: number;
  /** The request line and headers must arrive within this many ms (HEADERS_TIMEOUT_MS; Node answers a bare 408). */
  headersTimeoutMs: number;
  /** Open connections accepted at once; further ones are closed at once (MAX_CONNECTIONS). */
  maxConnections: number;
  /**
   * Days a finished webhook delivery (with its attempts) and an event with nothing pending are kept before the
   * retention job deletes them (WEBHOOK_RETENTION_DAYS; CONTRACT "Events and deliveries": default 30).
   */
  webhookRetentionDays: number;
  /** Days the request log keeps an entry (REQUEST_LOG_RETENTION_DAYS; CONTRACT: default 14). */
  requestLogRetentionDays: number;
  /** Port of the Prometheus metrics listener (METRICS_PORT, 1-65535; 0 = ephemeral, tests); undefined = no listener. */
  metricsPort?: number;
  /** Listen address of the metrics listener (METRICS_HOST, default 127.0.0.1: reachable from this machine only). */
  metricsHost: string;
  /**
   * The server's public origin (PUBLIC_URL, e.g. `https://stageline.example.com`): the OAuth issuer and the base of the
   * resource identifiers (oauth/resources.ts). Unset: the URL the server is reached at from this machine.
   */
  publicUrl?: string;
  /**
   * Length of the fixed per-key rate-limit window in seconds (RATE_LIMIT_WINDOW_SECONDS, 1..3600; default the
   * contract's 60). Tests shorten it so waiting out a window takes seconds, not a minute.
   */
  rateLimitWindowSeconds: number;
  /**
   * Tests only, never read from the environment: a PGlite data-directory dump an in-memory database (`dataDir`
   * `memory://`) starts from instead of initdb (db/database.ts `OpenOptions.template`). Undefined = empty cluster.
   */
  databaseTemplate?: string;
  /**
   * Tests only, never read from the environment: a PEM certificate trusted, beside the system's roots, when fetching
   * OAuth Client ID Metadata Documents (oauth/metadata-fetch.ts), so a test can serve one from a loopback https server
   * with a self-signed certificate. The fetch still goes through the SSRF guard (test mode admits loopback).
   */
  oauthMetadataCa?: string;
  /**
   * Tests only, never read from the environment: replaces some of the per-IP limits of the OAuth endpoints
   * (oauth/endpoint-limits.ts `OAUTH_ENDPOINT_LIMITS`), so a test can reach a limit in a few requests. Undefined = the
   * production limits (which every other test runs with).
   */
  oauthEndpointLimits?: Partial<Record<LimitedEndpoint, EndpointLimit>>;
  /**
   * Browser origins allowed to call the MCP endpoint `/v1/ext/mcp` (MCP_ALLOWED_ORIGINS, comma-separated, e.g.
   * `https://agent.example.com`; CONTRACT "MCP server": default none). A request with another `Origin` is 403;
   * one without `Origin` (every non-browser client) is not affected.
   */
  mcpAllowedOrigins: string[];
}

/** Reads the configuration from `env` (default `process.env`). Throws on an unknown NODE_ENV. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const rawMode = env.NODE_ENV ?? "development";
  if (!["production", "development", "test"].includes(rawMode)) {
    throw new Error(`NODE_ENV must be production, development or test (got "${rawMode}")`);
  }
  const mode = rawMode as Mode;
  return {
    port: env.PORT !== undefined ? Number(env.PORT) : 3000,
    host: env.HOST || (mode === "production" ? "0.0.0.0" : "127.0.0.1"),
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir: env.DATA_DIR ?? "./data",
    mode,
    logLevel: env.LOG_LEVEL ?? (mode === "test" ? "silent" : "info"),
    seedDemo: (env.SEED_DEMO ?? "true") !== "false",
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    bodyTimeoutMs: positiveInt(env, "REQUEST_BODY_TIMEOUT_MS", 30_000),
    headersTimeoutMs: positiveInt(env, "HEADERS_TIMEOUT_MS", 10_000),
    maxConnections: positiveInt(env, "MAX_CONNECTIONS", 1_000),
    webhookRetentionDays: positiveInt(env, "WEBHOOK_RETENTION_DAYS", DEFAULT_WEBHOOK_RETENTION_DAYS, MAX_WEBHOOK_RETENTION_DAYS),
    requestLogRetentionDays: positiveInt(env, "REQUEST_LOG_RETENTION_DAYS", DEFAULT_REQUEST_LOG_RETENTION_DAYS, MAX_REQUEST_LOG_RETENTION_DAYS),
    metricsPort: optionalPort(env, "METRICS_PORT"),
    metricsHost: env.METRICS_HOST || "127.0.0.1",
    publicUrl: env.PUBLIC_URL ? parsePublicUrl(env.PUBLIC_URL) : undefined,
    rateLimitWindowSeconds: positiveInt(env, "RATE_LIMIT_WINDOW_SECONDS", RATE_LIMIT.windowSeconds, MAX_RATE_LIMIT_WINDOW_SECONDS),
    mcpAllowedOrigins: (env.MCP_ALLOWED_ORIGINS ?? "").split(",").map((s) => s.trim()).filter(Boolean),
  };
}

/**
 * A positive whole number from `env[name]`, at most `max`, or `fallback` when unset.
 * @throws Error naming the variable when invalid.
 */
function positiveInt(env: NodeJS.ProcessEnv, name: string, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive whole number (got "${raw}")`);
  if (value > max) throw new Error(`${name} must be at most ${max} (got "${raw}")`);
  return value;
}

/** A TCP port (1-65535) from `env[name]`, or undefined when unset or empty. @throws Error naming the variable when invalid. */
function optionalPort(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === "") return undefined;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < 1 || value > 65_535) throw new Error(`${name} must be a port number from 1 to 65535 (got "${raw}")`);
  return value;
}

/**
 * PUBLIC_URL: an absolute http(s) URL; only its origin is kept.
 * @throws Error naming the variable when it is not an absolute http(s) URL.
 */
export function parsePublicUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`PUBLIC_URL must be an absolute URL such as https://stageline.example.com (got ${JSON.stringify(value)}).`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new Error("PUBLIC_URL must be an http or https URL.");
  return url.origin;
}
