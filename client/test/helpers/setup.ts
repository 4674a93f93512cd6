/**
 * Test helpers for the client's unit tests: nock against a fake origin (no real network), and a virtual clock so
 * backoff and rate-limit waits are recorded instead of slept.
 */
import nock from "nock";
import { clock } from "../../src/clock";
import { Stageline, type StagelineCredentials, type StagelineSettings } from "../../src";

/** The fake server's origin. */
export const ORIGIN = "https://stageline.test";
/** The API key the fake server expects. */
export const API_KEY = "sk_test_client";

/** A nock scope for the fake server that only matches requests carrying the API key. */
export function api(): nock.Scope {
  return nock(ORIGIN, { reqheaders: { "x-api-key": API_KEY } });
}

/** Requests in flight through clients made by `client()`: the virtual clock stands still while any is. */
const inFlight = { count: 0, idle: (): void => {} };

/**
 * A client for the fake server; `options` override the defaults (`credentials`: the API key by default). Its fetch counts requests in flight, so the
 * virtual clock ({@link useVirtualClock}) only moves while every call is waiting, as real time would not pass
 * between sending a request and the fake server answering it.
 */
export function client(options: Partial<StagelineSettings> & { credentials?: StagelineCredentials } = {}): Stageline {
  const counting: typeof fetch = async (...args) => {
    inFlight.count++;
    try {
      return await fetch(...args);
    } finally {
      inFlight.count--;
      inFlight.idle();
    }
  };
  const { credentials = { apiKey: API_KEY }, ...settings } = options;
  return new Stageline({ ...credentials, baseUrl: ORIGIN, fetch: counting, ...settings });
}

/** jest hooks: no real network, every mocked request used, nothing left over. */
export function useNock(): void {
  beforeAll(() => {
    if (!nock.isActive()) nock.activate();
    nock.disableNetConnect();
  });
  afterEach(() => {
    const pending = nock.pendingMocks();
    nock.cleanAll();
    expect(pending).toEqual([]);
  });
  afterAll(() => {
    nock.enableNetConnect();
    nock.restore();
  });
}

/** The sleeps the client asked for (ms), in order, while the virtual clock is installed. */
export interface VirtualClock {
  sleeps: number[];
  /** Virtual milliseconds since the clock was installed. */
  elapsed(): number;
}

/**
 * Replaces the client's clock for each test with a virtual one: `sleep(ms)` is recorded and scheduled at virtual
 * `now + ms`; while no request is in flight, pending sleeps fire earliest first, each on a later macrotask, moving
 * virtual time to its deadline, so concurrent sleeps overlap as real ones would and no test waits for real.
 */
export function useVirtualClock(): VirtualClock {
  const state = { start: 0, now: 0, sleeps: [] as number[], timers: [] as { at: number; resolve: () => void }[] };
  let scheduled = false;
  const schedule = (): void => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(step);
  };
  const step = (): void => {
    scheduled = false;
    if (inFlight.count > 0) return;
    const timer = state.timers.shift();
    if (!timer) return;
    state.now = Math.max(state.now, timer.at);
    timer.resolve();
    schedule();
  };
  beforeEach(() => {
    state.start = state.now = Date.now();
    state.sleeps = [];
    state.timers = [];
    inFlight.idle = schedule;
    jest.spyOn(clock, "now").mockImplementation(() => state.now);
    jest.spyOn(clock, "sleep").mockImplementation(
      (ms: number) =>
        new Promise<void>((resolve) => {
          state.sleeps.push(ms);
          state.timers.push({ at: state.now + Math.max(0, ms), resolve });
          state.timers.sort((a, b) => a.at - b.at);
          schedule();
        }),
    );
  });
  afterEach(() => jest.restoreAllMocks());
  return {
    get sleeps() {
      return state.sleeps;
    },
    elapsed: () => state.now - state.start,
  };
}

/** Rate-limit headers of an answer (IETF draft-6, as the server sends them). */
export function rateHeaders(remaining: number, resetSeconds: number, limit = 60): Record<string, string> {
  return { "RateLimit-Limit": String(limit), "RateLimit-Remaining": String(remaining), "RateLimit-Reset": String(resetSeconds) };
}

/** A problem-details body. */
export function problem(status: number, code: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: `https://stageline.example/problems/${code}`, title: code.replace(/_/g, " "), status, detail: `detail of ${code}`, code, ...extra };
}

/** A minimal item body (the fake server's answers need not be complete for the client). */
export function item(id: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { item_id: id, short_id: `SALES-${id}`, name: `Item ${id}`, version: 1, ...extra };
}

/** A create body. */
export const CREATE_BODY = { name: "Acme deal", pipeline_id: "p1", stage_id: "s1" };

/** A nock reply that records the attempt's Idempotency-Key in `keys`, then answers `status`, `body`, `headers`. */
export function recordingKey(keys: string[], status: number, body: unknown, headers: Record<string, string> = {}) {
  return function (this: { req: { headers: Record<string, string | string[]> } }): [number, unknown, Record<string, string>] {
    keys.push(String(this.req.headers["idempotency-key"]));
    return [status, body, headers];
  };
}
