/**
 * Minimal types for autocannon 8 (the package ships none): only what bench/lib/load.ts uses.
 * See https://github.com/mcollina/autocannon#api.
 */
declare module "autocannon" {
  import type { EventEmitter } from "node:events";

  namespace autocannon {
    interface Request {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
      /** Mutates the request before it is sent; return it (a falsy value restarts the request list). */
      setupRequest?: (req: Request, context: Record<string, unknown>) => Request | undefined;
      /** Sees every response of this request. */
      onResponse?: (status: number, body: string, context: Record<string, unknown>, headers: Record<string, string>) => void;
    }

    /** One connection of the load generator. */
    interface Client extends EventEmitter {
      setRequests(requests: Request[]): void;
      setRequest(request: Request): void;
    }

    interface Options {
      url: string;
      connections?: number;
      duration?: number;
      amount?: number;
      timeout?: number;
      pipelining?: number;
      method?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
      requests?: Request[];
      idReplacement?: boolean;
      overallRate?: number;
      setupClient?: (client: Client) => void;
      title?: string;
    }

    /** An hdr-histogram-percentiles-obj summary. */
    interface Histogram {
      min: number;
      max: number;
      average: number;
      stddev: number;
      total: number;
      p50: number;
      p90: number;
      p97_5: number;
      p99: number;
      p99_9: number;
    }

    interface Result {
      title?: string;
      url: string;
      requests: Histogram;
      latency: Histogram;
      throughput: Histogram;
      duration: number;
      errors: number;
      timeouts: number;
      mismatches: number;
      non2xx: number;
      resets: number;
      "1xx": number;
      "2xx": number;
      "3xx": number;
      "4xx": number;
      "5xx": number;
      statusCodeStats: Record<string, { count: number }>;
      start: Date;
      finish: Date;
    }

    interface Instance extends EventEmitter, PromiseLike<Result> {
      stop(): void;
    }
  }

  function autocannon(options: autocannon.Options): autocannon.Instance;
  export = autocannon;
}
