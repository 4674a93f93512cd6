/**
 * `new Stageline(options)`: the client (CONTRACT "Client library (`@stageline/client`)"). One instance per API key;
 * its calls share one rate-limit gate, so concurrent calls queue for the server's window instead of failing.
 */
import createClient from "openapi-fetch";
import type { ApiContext } from "./api";
import type { paths } from "./generated/openapi";
import { unwrap } from "./api";
import { RateLimitGate } from "./rate-limit-gate";
import { Items } from "./resources/items";
import { Pipelines } from "./resources/pipelines";
import { Tasks } from "./resources/tasks";
import { Webhooks } from "./resources/webhooks";
import { Transport } from "./transport";
import type { Me } from "./types";

/** The client's options. */
export interface StagelineOptions {
  /** An API key of the company (sent as `x-api-key`). Required. */
  apiKey: string;
  /** The server's origin, e.g. `https://stageline.example.com` (a trailing slash is fine); the client adds `/v1/ext`. Required. */
  baseUrl: string;
  /** Retries after network errors, timeouts and 5xx, for reads and keyed creates (default 3; 0 disables). */
  maxRetries?: number;
  /** Time limit of each attempt, in milliseconds, including reading the body (default 30,000). */
  timeoutMs?: number;
  /** The most one call waits in all for the rate limit (429s), in milliseconds (default 300,000), before RateLimitError. */
  maxRateLimitWaitMs?: number;
  /** The fetch implementation (default: the global `fetch`), e.g. one with a proxy agent. */
  fetch?: typeof globalThis.fetch;
}

/** The Stageline external API client. */
export class Stageline {
  /** Items: `list`, `iterate`, `get`, `create`, `update`, `checkDuplicates`, `find`. */
  readonly items: Items;
  /** Tasks: `list`, `iterate`, `get`, `create`, `update`, `complete`. */
  readonly tasks: Tasks;
  /** Pipelines: `list`, `stages`, `statuses`. */
  readonly pipelines: Pipelines;
  /** REST hooks: `subscribe`, `unsubscribe`, `list`, `iterate`, `sample`, `deliveries`, `redeliver`, `rotateSecret`. */
  readonly webhooks: Webhooks;
  private readonly ctx: ApiContext;

  /**
   * @param options see {@link StagelineOptions}.
   * @throws TypeError when `apiKey` or `baseUrl` is missing, `baseUrl` is not an http(s) URL, or a number option is
   * negative or not a number.
   */
  constructor(options: StagelineOptions) {
    if (!options || typeof options.apiKey !== "string" || options.apiKey === "") throw new TypeError("Stageline: `apiKey` is required");
    if (typeof options.baseUrl !== "string" || !/^https?:\/\/[^/]/i.test(options.baseUrl)) {
      throw new TypeError("Stageline: `baseUrl` must be the server's http(s) origin, e.g. https://stageline.example.com");
    }
    const maxRetries = nonNegative("maxRetries", options.maxRetries, 3);
    const timeoutMs = nonNegative("timeoutMs", options.timeoutMs, 30_000);
    const maxRateLimitWaitMs = nonNegative("maxRateLimitWaitMs", options.maxRateLimitWaitMs, 300_000);
    const fetchImpl = options.fetch ?? ((...args: Parameters<typeof globalThis.fetch>) => globalThis.fetch(...args));
    const transport = new Transport({ fetch: fetchImpl, maxRetries, timeoutMs, maxRateLimitWaitMs, gate: new RateLimitGate() });
    const api = createClient<paths>({
      baseUrl: options.baseUrl.replace(/\/+$/, ""),
      headers: { "x-api-key": options.apiKey, accept: "application/json" },
    });
    this.ctx = { api, read: transport.fetcher(true), keyed: transport.fetcher(true), unkeyed: transport.fetcher(false) };
    this.items = new Items(this.ctx);
    this.tasks = new Tasks(this.ctx);
    this.pipelines = new Pipelines(this.ctx);
    this.webhooks = new Webhooks(this.ctx);
  }

  /**
   * The company and API key this client authenticates as (GET /v1/ext/me; any valid key).
   * @returns `{ company: { id, name }, key: { id, name, scopes, expires_at } }`.
   * @throws AuthenticationError for a bad key, other StagelineErrors, ConnectionError.
   */
  me(): Promise<Me> {
    return unwrap(this.ctx.api.GET("/v1/ext/me", { fetch: this.ctx.read }));
  }
}

/** A non-negative finite number option, or its default. */
function nonNegative(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) throw new TypeError(`Stageline: \`${name}\` must be a non-negative number`);
  return value;
}
