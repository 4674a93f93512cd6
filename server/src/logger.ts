/** Structured logging (pino). One root logger per server; request logs come from pino-http in app.ts. */
import pino, { type Logger } from "pino";

/**
 * Every place a credential can appear in a log line: API keys (`x-api-key`, `Authorization: Bearer sl_...`), the admin
 * token, console session cookies and CSRF tokens, and secret-bearing fields of logged objects.
 */
const REDACT_PATHS = [
  'req.headers["x-api-key"]',
  'req.headers["x-admin-token"]',
  "req.headers.authorization",
  'req.headers["proxy-authorization"]',
  "req.headers.cookie",
  'req.headers["x-csrf-token"]',
  'res.headers["set-cookie"]',
  "secret",
  "key",
  "password",
  "token",
];

/** Creates the root logger at `level` ("silent" turns it off). API keys, secrets and session cookies are redacted. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: "stageline" },
    redact: { paths: REDACT_PATHS, censor: "[redacted]" },
  });
}
