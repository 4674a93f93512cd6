/**
 * Stands in for Zapier's hook URLs in the live tests: an HTTP server on 127.0.0.1 that answers 200 and records
 * every delivery (headers, exact body text and parsed JSON body). Loopback http targets are allowed because the live server runs with
 * NODE_ENV=test (CONTRACT "Events and deliveries").
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One received POST. */
export interface Delivery {
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The exact body text (what the signature covers). */
  raw: string;
  body: unknown;
}

/** A running receiver. */
export interface HookReceiver {
  /** A target URL under this receiver, e.g. `urlFor('zap-1')`. */
  urlFor(name: string): string;
  deliveries: Delivery[];
  /** Resolves with the first delivery to `urlFor(name)` that satisfies `match`, polling up to `timeoutMs`. */
  waitFor(name: string, match: (d: Delivery) => boolean, timeoutMs?: number): Promise<Delivery>;
  close(): Promise<void>;
}

/** Starts a receiver on an ephemeral loopback port. */
export async function startHookReceiver(): Promise<HookReceiver> {
  const deliveries: Delivery[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // keep the raw text
      }
      deliveries.push({ path: req.url ?? '', headers: req.headers, raw: text, body });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const base = `http://127.0.0.1:${port}`;

  return {
    urlFor: (name) => `${base}/hooks/${name}`,
    deliveries,
    async waitFor(name, match, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const hit = deliveries.find((d) => d.path === `/hooks/${name}` && match(d));
        if (hit) return hit;
        if (Date.now() > deadline) {
          throw new Error(`No matching delivery to /hooks/${name} within ${timeoutMs} ms; received: ${JSON.stringify(deliveries.map((d) => d.path))}`);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
