/** Structured logging (pino). One root logger per server; request logs come from pino-http in app.ts. */
import pino, { type Logger } from "pino";

/** Creates the root logger at `level` ("silent" turns it off). API keys and secrets are redacted. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: "stageline" },
    redact: { paths: ["req.headers[\"x-api-key\"]", "req.headers[\"x-admin-token\"]", "req.headers.cookie", "res.headers[\"set-cookie\"]", "secret", "key", "password"], censor: "[redacted]" },
  });
}
