/**
 * Two server processes (helpers/server-process.ts) on one fresh store, started in a `beforeAll` of the calling
 * `describe` and killed (store removed) in its `afterAll`: for tests of what must hold across processes sharing one
 * PostgreSQL database (call it only when TEST_DATABASE_URL is set). The first start seeds the demo company.
 */
import { createServerStore, killServerProcesses, startServerProcess, type ServerProcess, type ServerStore } from "./server-process";

/** The running pair; read it inside tests (it is set once `beforeAll` has run). */
export interface ProcessPair {
  a: ServerProcess;
  b: ServerProcess;
  /** The demo company's all-scope API key (seeded by the first start). */
  apiKey: string;
  /** The processes' `DATABASE_URL` (PostgreSQL with `?schema=`), for tests that read the shared tables directly. */
  databaseUrl: string;
}

/** Registers the hooks; `env` is passed to both processes (e.g. a raised `RATE_LIMIT_PER_MINUTE`). */
export function useProcessPair(env: Record<string, string> = { RATE_LIMIT_PER_MINUTE: "10000" }): ProcessPair {
  const pair = {} as ProcessPair;
  let store: ServerStore | undefined;
  beforeAll(async () => {
    store = createServerStore();
    pair.databaseUrl = store.databaseUrl ?? "";
    pair.a = await startServerProcess(store, env);
    if (!pair.a.demoApiKey) throw new Error(`the first start did not seed the demo company:\n${pair.a.output()}`);
    pair.apiKey = pair.a.demoApiKey;
    pair.b = await startServerProcess(store, env);
  }, 60_000);
  afterAll(async () => {
    await killServerProcesses();
    await store?.remove();
  });
  return pair;
}
