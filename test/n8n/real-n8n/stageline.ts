/**
 * A real Stageline server for the opt-in n8n run and the trigger's live test: the repository's built server as a
 * child process (server/test/helpers/server-process.ts, the server tests' own helper) on an ephemeral loopback port,
 * `NODE_ENV=test` (so n8n's `http://127.0.0.1` webhook URLs are accepted as targets, docs/operations.md "Configuration"), seeded
 * with the demo company, whose all-scope key it prints. Storage: a fresh PGlite folder, or a fresh schema of
 * `TEST_DATABASE_URL` when that is set.
 *
 * The n8n package never imports server code: n8n and the nodes reach this server over HTTP only.
 */
import { createServerStore, startServerProcess } from "../../../server/test/helpers/server-process";

/** A running Stageline server. */
export interface StagelineServer {
  /** Base URL, e.g. http://127.0.0.1:43121 (the credential's Base URL). */
  url: string;
  /** The demo company's all-scope API key. */
  apiKey: string;
  /** Which database it runs on, for the summary. */
  database: string;
  /** Everything the process wrote (for failure messages). */
  output(): string;
  /** Stops the process and removes its database. */
  stop(): Promise<void>;
}

/**
 * Builds the server if needed and starts it on a fresh store.
 * @param env extra environment of the server process (e.g. `RATE_LIMIT_WINDOW_SECONDS`).
 * @throws Error with the server's output when it does not start, or starts without seeding the demo company.
 */
export async function startStageline(env: Record<string, string> = {}): Promise<StagelineServer> {
  const store = createServerStore();
  const server = await startServerProcess(store, env).catch(async (err: unknown) => {
    await store.remove();
    throw err;
  });
  const stop = async (): Promise<void> => {
    await server.stop();
    await store.remove();
  };
  if (server.demoApiKey === null) {
    await stop();
    throw new Error(`Stageline started without printing its demo key:\n${server.output()}`);
  }
  const database = store.kind === "postgres" ? "PostgreSQL (TEST_DATABASE_URL, own schema)" : "embedded PGlite";
  return { url: server.url, apiKey: server.demoApiKey, database, output: server.output, stop };
}

/**
 * Calls Stageline's external API with the demo key.
 * @returns the status and the parsed JSON body (null for 204).
 * @throws Error on a network failure.
 */
export async function stagelineApi(server: StagelineServer, method: string, apiPath: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}${apiPath}`, {
    method,
    headers: { "x-api-key": server.apiKey, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
