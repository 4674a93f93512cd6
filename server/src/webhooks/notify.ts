/**
 * Cross-process wake-up for the webhook dispatcher on PostgreSQL: after an outbox commit a process sends
 * `NOTIFY stageline_outbox`, and every other process listening on the same database starts a claim cycle within
 * milliseconds instead of waiting for its fallback poll. PGlite is one process, so it has no use for this.
 *
 * Notifications are database-wide while Stageline tables live in one schema, so the payload names the schema (and
 * the sending dispatcher): processes on other schemas of the same server, and the sender itself, ignore it.
 */
import type { Logger } from "pino";
import type { Pool, PoolClient } from "pg";

/** The LISTEN/NOTIFY channel of outbox commits. */
export const OUTBOX_CHANNEL = "stageline_outbox";

/** A running LISTEN connection. */
export interface OutboxListener {
  /** Stops listening and closes the dedicated connection. */
  close(): Promise<void>;
}

export interface ListenOptions {
  /** PostgreSQL schema whose outbox this process serves. */
  schema: string;
  /** This dispatcher's id: its own notifications are ignored. */
  self: string;
  /** Called for each relevant notification, and after every (re)connect to catch up on missed ones. */
  onWake: () => void;
  logger: Logger;
  /** Delay before reconnecting after the connection fails (ms). */
  reconnectMs: number;
}

function payloadOf(schema: string, sender: string): string {
  return `${schema}/${sender}`;
}

/**
 * Sends one wake-up to every listener of `schema` (one `pg_notify` on a pooled connection).
 * @throws when the query fails (the caller logs it; the fallback poll still finds the work).
 */
export async function notifyOutbox(pool: Pool, schema: string, sender: string): Promise<void> {
  await pool.query("SELECT pg_notify($1, $2)", [OUTBOX_CHANNEL, payloadOf(schema, sender)]);
}

/**
 * Holds one pool connection in `LISTEN stageline_outbox` for as long as the listener runs; reconnects after
 * `reconnectMs` when the connection drops. Never throws: failures are logged and retried.
 */
export function listenForOutbox(pool: Pool, options: ListenOptions): OutboxListener {
  const { schema, self, onWake, logger, reconnectMs } = options;
  let client: PoolClient | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | null = null;
  let connecting: Promise<void> = Promise.resolve();

  const onNotification = (msg: { channel: string; payload?: string }) => {
    if (msg.channel !== OUTBOX_CHANNEL || !msg.payload) return;
    const slash = msg.payload.indexOf("/");
    if (msg.payload.slice(0, slash) !== schema || msg.payload.slice(slash + 1) === self) return;
    onWake();
  };

  const drop = (c: PoolClient, err?: Error) => {
    c.removeListener("notification", onNotification);
    c.release(err ?? true); // destroy it: a connection left in LISTEN must not go back to the pool
    if (client === c) client = null;
  };

  const scheduleReconnect = () => {
    if (closed || retry) return;
    retry = setTimeout(() => {
      retry = null;
      connecting = connect();
    }, reconnectMs);
    retry.unref();
  };

  const connect = async () => {
    let c: PoolClient | null = null;
    try {
      c = await pool.connect();
      const conn = c;
      conn.on("notification", onNotification);
      conn.on("error", (err) => {
        logger.warn({ err }, "webhook wake-up connection failed; reconnecting");
        drop(conn, err);
        scheduleReconnect();
      });
      await conn.query(`LISTEN ${OUTBOX_CHANNEL}`);
      if (closed) return drop(conn);
      client = conn;
      onWake();
    } catch (err) {
      logger.warn({ err }, "could not LISTEN for webhook wake-ups; retrying");
      if (c) drop(c, err as Error);
      scheduleReconnect();
    }
  };

  connecting = connect();

  return {
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      retry = null;
      await connecting;
      const c = client;
      if (!c) return;
      client = null;
      await c.query(`UNLISTEN ${OUTBOX_CHANNEL}`).catch(() => undefined);
      drop(c);
    },
  };
}
