/**
 * The metrics listener (issue 17): a second HTTP server, apart from the main port, that serves the registry in
 * Prometheus' text format at `GET /metrics`. It listens only when `METRICS_PORT` is set, on `METRICS_HOST`
 * (default 127.0.0.1: metrics are for the operator's scraper, not the internet). No key: reach is the protection.
 */
import http, { type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import type { Registry } from "prom-client";

/** The path Prometheus scrapes. */
export const METRICS_PATH = "/metrics";

/** A listening metrics server. */
export interface MetricsListener {
  /** e.g. `http://127.0.0.1:9464/metrics`. */
  url: string;
  port: number;
  /** Stops listening and closes idle connections. Safe to call twice. */
  close(): Promise<void>;
}

/**
 * Starts listening on `host:port` (`port` 0: an ephemeral port).
 * `GET`/`HEAD /metrics`: 200 with the registry's exposition; another path: 404; another method: 405.
 * @throws when the address cannot be bound (e.g. the port is in use).
 */
export async function startMetricsListener(registry: Registry, options: { port: number; host: string; logger: Logger }): Promise<MetricsListener> {
  const server: Server = http.createServer({ requestTimeout: 30_000, headersTimeout: 10_000 }, (req, res) => {
    const path = (req.url ?? "").split("?")[0];
    if (path !== METRICS_PATH) {
      res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end(`Not found: metrics are at ${METRICS_PATH}\n`);
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain; charset=utf-8" }).end("Method not allowed\n");
      return;
    }
    registry.metrics().then(
      (body) => {
        res.writeHead(200, { "content-type": registry.contentType, "cache-control": "no-store" });
        res.end(req.method === "HEAD" ? undefined : body);
      },
      (err: unknown) => {
        options.logger.error({ err }, "collecting metrics failed");
        res.writeHead(500, { "content-type": "text/plain; charset=utf-8" }).end("Collecting metrics failed\n");
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const host = options.host === "0.0.0.0" || options.host === "::" ? "127.0.0.1" : options.host;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}${METRICS_PATH}`;
  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      })),
  };
}
