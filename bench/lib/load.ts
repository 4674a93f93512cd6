/**
 * Load generation with autocannon (https://github.com/mcollina/autocannon), run in this process. Every measurement
 * returns the same small record: successful requests per second, latency percentiles (ms) and every kind of
 * failure (connection errors, timeouts, non-2xx responses), so a figure is never reported over failed requests
 * without saying so.
 */
import autocannon from "autocannon";

export interface LoadOptions {
  /** Base URL of the server, e.g. http://127.0.0.1:4000 */
  url: string;
  method?: "GET" | "POST" | "PATCH" | "DELETE";
  path: string;
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  /** Seconds; ignored when `amount` is set. */
  duration?: number;
  /** Total number of requests (instead of a duration). */
  amount?: number;
  /**
   * Replace `[<id>]` in the body with a unique id per request. (Done in `setupRequest`, so Content-Length is right:
   * autocannon's own `idReplacement` rewrites the body after the length is computed and breaks every request.)
   */
  uniqueIds?: boolean;
  /** With `uniqueIds`: also send a unique `Idempotency-Key` per request (CONTRACT "Idempotency"). */
  idempotencyKeys?: boolean;
  /**
   * Per-connection setup (e.g. give each connection its own item and version). Requests it installs should pass
   * their responses to `seen` so a failure can be quoted.
   */
  setupClient?: (client: autocannon.Client, seen: (status: number, body: string) => void) => void;
  /** Per-request mutation (e.g. pick a random item id). */
  setupRequest?: autocannon.Request["setupRequest"];
}

export interface LoadResult {
  /** 2xx responses per second over the run. */
  reqPerSec: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** Mean latency, ms. */
  mean: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Count per status code, e.g. { "200": 1234 }. */
  statusCodes: Record<string, number>;
  durationS: number;
  /** The first non-2xx response, for the error report. */
  failureSample?: { status: number; body: string };
}

/**
 * A request unanswered after this long counts as an error (a timeout): Zapier, the main client of this API, gives
 * an API call 30 seconds.
 */
export const REQUEST_TIMEOUT_S = 30;

const runId = Date.now().toString(36);
let idCounter = 0;

/** Runs one autocannon measurement. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const headers = { ...(options.body !== undefined ? { "content-type": "application/json" } : {}), ...options.headers };
  let setupRequest = options.setupRequest;
  if (options.uniqueIds && options.body !== undefined) {
    const template = options.body;
    const inner = setupRequest;
    setupRequest = (req, context) => {
      const id = `${runId}${(++idCounter).toString(36)}`;
      const withBody = { ...req, body: template.replace(/\[<id>\]/g, id) };
      if (options.idempotencyKeys) withBody.headers = { ...req.headers, "Idempotency-Key": `bench-${id}` };
      return inner ? inner(withBody, context) : withBody;
    };
  }
  let failureSample: LoadResult["failureSample"];
  const seen = (status: number, body: string) => {
    if ((status < 200 || status > 299) && !failureSample) failureSample = { status, body: String(body ?? "").slice(0, 400) };
  };
  const request: autocannon.Request = {
    method: options.method ?? "GET",
    path: options.path,
    headers,
    ...(options.body !== undefined ? { body: options.body } : {}),
    ...(setupRequest ? { setupRequest } : {}),
    onResponse: seen,
  };
  const setupClient = options.setupClient;
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    // A fixed amount ends at the first sample tick after the last response: sample every 20 ms (not autocannon's
    // 1 s), so the run's duration, and req/s with it, is not rounded up to whole seconds.
    ...(options.amount !== undefined ? { amount: options.amount, sampleInt: 20 } : { duration: options.duration ?? 10 }),
    timeout: REQUEST_TIMEOUT_S,
    requests: [request],
    ...(setupClient ? { setupClient: (client: autocannon.Client) => setupClient(client, seen) } : {}),
  });
  const statusCodes: Record<string, number> = {};
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = Number(stat.count);
  const ok = result["2xx"];
  const durationS = result.duration > 0 ? result.duration : (result.finish.getTime() - result.start.getTime()) / 1000;
  return {
    reqPerSec: durationS > 0 ? ok / durationS : 0,
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    max: result.latency.max,
    mean: result.latency.average,
    ok,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    durationS,
    ...(failureSample ? { failureSample } : {}),
  };
}

/** Total failures of a result (errors include timeouts in autocannon's counting). */
export function failures(r: LoadResult): number {
  return r.non2xx + r.errors;
}

/** Combines several rounds of one measurement: mean req/s and p50, worst p99 and max, summed counts. */
export function combineRounds(rounds: LoadResult[]): LoadResult {
  if (rounds.length === 1) return rounds[0]!;
  const mean = (f: (r: LoadResult) => number) => rounds.reduce((s, r) => s + f(r), 0) / rounds.length;
  const sum = (f: (r: LoadResult) => number) => rounds.reduce((s, r) => s + f(r), 0);
  const statusCodes: Record<string, number> = {};
  for (const r of rounds) for (const [k, v] of Object.entries(r.statusCodes)) statusCodes[k] = (statusCodes[k] ?? 0) + v;
  return {
    reqPerSec: mean((r) => r.reqPerSec),
    p50: mean((r) => r.p50),
    p90: mean((r) => r.p90),
    p99: Math.max(...rounds.map((r) => r.p99)),
    max: Math.max(...rounds.map((r) => r.max)),
    mean: mean((r) => r.mean),
    ok: sum((r) => r.ok),
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors),
    timeouts: sum((r) => r.timeouts),
    statusCodes,
    durationS: sum((r) => r.durationS),
    ...(rounds.find((r) => r.failureSample) ? { failureSample: rounds.find((r) => r.failureSample)!.failureSample! } : {}),
  };
}
