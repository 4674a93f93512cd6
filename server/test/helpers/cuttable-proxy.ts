/**
 * A loopback TCP proxy that can be cut, to take a database away from a server without touching the database itself
 * (issue 39: the machine's PostgreSQL is shared and is never stopped by a test). `cut()` destroys every proxied
 * connection (both sides, so the server's driver sees the connection end mid-query) and stops listening, so new
 * connections are refused (ECONNREFUSED) as from a database that is down; `restore()` listens again on the same port.
 */
import net from "node:net";

/** A running proxy from `127.0.0.1:port` to its target. */
export interface CuttableProxy {
  /** The loopback port it listens on (the same after `restore()`). */
  port: number;
  /** Whether it is cut now. */
  readonly isCut: boolean;
  /** Destroys every open connection and refuses new ones until `restore()`. */
  cut(): Promise<void>;
  /** Accepts and proxies connections again, on the same port. */
  restore(): Promise<void>;
  /** Stops it for good (destroys its connections). */
  close(): Promise<void>;
}

/** `url` with its host and port replaced by the proxy's (`127.0.0.1:port`); everything else kept. */
export function throughProxy(url: string, proxy: CuttableProxy): string {
  const u = new URL(url);
  u.hostname = "127.0.0.1";
  u.port = String(proxy.port);
  return u.toString();
}

/**
 * Starts a proxy to `target` (host and port of the database).
 * @throws when it cannot listen on a loopback port.
 */
export async function startCuttableProxy(target: { host: string; port: number }): Promise<CuttableProxy> {
  const open = new Set<net.Socket>();
  let cut = false;
  const server = net.createServer((client) => {
    if (cut) return void client.destroy();
    const upstream = net.connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on("close", () => open.delete(socket));
      socket.on("error", () => undefined); // a reset is the point of this proxy; both sides are torn down below
    }
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  });
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        server.off("error", reject);
        resolve((server.address() as net.AddressInfo).port);
      });
    });
  const stopListening = () => new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
  const destroyAll = () => {
    for (const socket of open) socket.destroy();
    open.clear();
  };
  const port = await listen(0);
  return {
    port,
    get isCut() {
      return cut;
    },
    async cut() {
      cut = true;
      const closed = stopListening();
      destroyAll();
      await closed;
    },
    async restore() {
      cut = false;
      await listen(port);
    },
    async close() {
      cut = true;
      const closed = stopListening();
      destroyAll();
      await closed;
    },
  };
}
