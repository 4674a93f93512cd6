/**
 * `new Stageline(options)`: the client (CONTRACT "Client library (`@stageline/client`)"). One instance per API key or
 * OAuth access token;
 * its calls share one rate-limit gate, so concurrent calls queue for the server's window instead of failing.
 */
import createClient from "openapi-fetch";
import type { ApiContext } from "./api";
import type { paths } from "./generated/openapi";
import { unwrap } from "./api";
import { BearerAuth, type RefreshAccessToken } from "./bearer-auth";
import { RateLimitGate } from "./rate-limit-gate";
import { Events } from "./resources/events";
import { Items } from "./resources/items";
import { Notes } from "./resources/notes";
import { Pipelines } from "./resources/pipelines";
import { Tasks } from "./resources/tasks";
import { Users } from "./resources/users";
import { Webhooks } from "./resources/webhooks";
import { Transport } from "./transport";
import type { Me } from "./types";

/** The longest delay a Node timer takes (a longer one fires at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** How the client authenticates: an API key, or an OAuth access token (exactly one of the two). */
export type StagelineCredentials =
  | {
      /** An API key of the company (sent as `x-api-key`). */
      apiKey: string;
      accessToken?: undefined;
      refreshAccessToken?: undefined;
    }
  | {
      apiKey?: undefined;
      /** An OAuth 2.1 access token for the REST API (resource `<baseUrl>/v1/ext`), sent as `Authorization: Bearer`. */
      accessToken: string;
      /**
       * Called when the server refuses the token (`401` with `WWW-Authenticate: Bearer error="invalid_token"`: expired
       * or revoked); returns a new access token (e.g. from your refresh token at `<baseUrl>/oauth/token`, storing the
       * rotated refresh token it returns). The refused request is then sent once more. Concurrent calls share one
       * refresh. Without it, such a 401 is an AuthenticationError.
       */
      refreshAccessToken?: RefreshAccessToken;
    };

/** The client's options: one credential ({@link StagelineCredentials}) and the settings below. */
export type StagelineOptions = StagelineCredentials & StagelineSettings;

/** The client's settings besides its credential. */
export interface StagelineSettings {
  /** The server's origin, e.g. `https://stageline.example.com` (a trailing slash is fine); the client adds `/v1/ext`. Required. */
  baseUrl: string;
  /** Retries after network errors, timeouts and 5xx, for reads and keyed creates: an integer >= 0 (default 3; 0 disables). */
  maxRetries?: number;
  /** Time limit of each attempt, in milliseconds, > 0, including reading the body (default 30,000). */
  timeoutMs?: number;
  /** The most one call waits in all for the rate limit (429s), in milliseconds (default 300,000), before RateLimitError. */
  maxRateLimitWaitMs?: number;
  /** The fetch implementation (default: the global `fetch`), e.g. one with a proxy agent. */
  fetch?: typeof globalThis.fetch;
}

/** The Stageline external API client. */
export class Stageline {
  /** Items: `list`, `iterate`, `get`, `create`, `upsert`, `update`, `delete`, `checkDuplicates`, `find`, `batch`, `batchAll`. */
  readonly items: Items;
  /** Tasks: `list`, `iterate`, `get`, `create`, `update`, `complete`, `batch`, `batchAll`. */
  readonly tasks: Tasks;
  /** Notes on items: `list`, `iterate`, `get`, `create`, `update`, `delete`. */
  readonly notes: Notes;
  /** Pipelines: `list`, `stages`, `statuses`, `fields`. */
  readonly pipelines: Pipelines;
  /** People of the company: `list`, `iterate` (whom tasks can be assigned to). */
  readonly users: Users;
  /** REST hooks: `subscribe`, `unsubscribe`, `list`, `iterate`, `sample`, `deliveries`, `redeliver`, `replay`, `rotateSecret`. */
  readonly webhooks: Webhooks;
  /** The events feed: `list`, `iterate`, `get`, `follow`. */
  readonly events: Events;
  private readonly ctx: ApiContext;

  /**
   * @param options see {@link StagelineOptions}.
   * @throws TypeError when neither or both of `apiKey` and `accessToken` are given (or one is empty),
   * `refreshAccessToken` is given without `accessToken` or is not a function, `baseUrl` is missing, `baseUrl` is not an http(s) URL, `maxRetries` is not a
   * non-negative integer, `timeoutMs` is not a number > 0 (and at most 2^31 - 1), or `maxRateLimitWaitMs` is not a finite number >= 0.
   */
  constructor(options: StagelineOptions) {
    if (!options) throw new TypeError("Stageline: `apiKey` or `accessToken` is required");
    const hasKey = options.apiKey !== undefined;
    const hasToken = options.accessToken !== undefined;
    if (hasKey === hasToken) throw new TypeError("Stageline: give exactly one of `apiKey` and `accessToken`");
    if (hasKey && (typeof options.apiKey !== "string" || options.apiKey === "")) throw new TypeError("Stageline: `apiKey` must be a non-empty string");
    if (hasToken && (typeof options.accessToken !== "string" || options.accessToken === "")) throw new TypeError("Stageline: `accessToken` must be a non-empty string");
    if (options.refreshAccessToken !== undefined && (!hasToken || typeof options.refreshAccessToken !== "function")) {
      throw new TypeError("Stageline: `refreshAccessToken` must be a function, given with `accessToken`");
    }
    if (typeof options.baseUrl !== "string" || !/^https?:\/\/[^/]/i.test(options.baseUrl)) {
      throw new TypeError("Stageline: `baseUrl` must be the server's http(s) origin, e.g. https://stageline.example.com");
    }
    const maxRetries = numberOption("maxRetries", options.maxRetries, 3, (n) => Number.isInteger(n) && n >= 0, "a non-negative integer");
    const timeoutMs = numberOption("timeoutMs", options.timeoutMs, 30_000, (n) => n > 0 && n <= MAX_TIMER_MS, "a number of milliseconds > 0 and at most 2^31 - 1");
    const maxRateLimitWaitMs = numberOption("maxRateLimitWaitMs", options.maxRateLimitWaitMs, 300_000, (n) => n >= 0, "a non-negative number of milliseconds");
    const fetchImpl = options.fetch ?? ((...args: Parameters<typeof globalThis.fetch>) => globalThis.fetch(...args));
    const bearer = hasToken ? new BearerAuth(options.accessToken!, options.refreshAccessToken) : undefined;
    const transport = new Transport({ fetch: fetchImpl, maxRetries, timeoutMs, maxRateLimitWaitMs, gate: new RateLimitGate(), bearer });
    const api = createClient<paths>({
      baseUrl: options.baseUrl.replace(/\/+$/, ""),
      // With an access token, the transport sets `Authorization` on each attempt (the token may be renewed).
      headers: { ...(hasKey ? { "x-api-key": options.apiKey! } : {}), accept: "application/json" },
    });
    this.ctx = { api, read: (run) => transport.call(true, run), keyed: (run) => transport.call(true, run), unkeyed: (run) => transport.call(false, run) };
    this.items = new Items(this.ctx);
    this.tasks = new Tasks(this.ctx);
    this.notes = new Notes(this.ctx);
    this.pipelines = new Pipelines(this.ctx);
    this.users = new Users(this.ctx);
    this.webhooks = new Webhooks(this.ctx);
    this.events = new Events(this.ctx);
  }

  /**
   * The company and API key this client authenticates as (GET /v1/ext/me; any valid key).
   * @returns `{ company: { id, name }, key: { id, name, scopes, expires_at } }`.
   * @throws AuthenticationError for a bad key, other StagelineErrors, ConnectionError.
   */
  me(): Promise<Me> {
    return unwrap(this.ctx.read((fetch) => this.ctx.api.GET("/v1/ext/me", { fetch })));
  }
}

/**
 * A finite number option that passes `valid`, or its default when undefined.
 * @throws TypeError naming the option and what it must be (`expected`).
 */
function numberOption(name: string, value: number | undefined, fallback: number, valid: (n: number) => boolean, expected: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || !valid(value)) throw new TypeError(`Stageline: \`${name}\` must be ${expected}`);
  return value;
}
