/**
 * The per-credential rate limit (an API key's, or an OAuth grant's): 60 requests per fixed 60-second window (spec "Limits", CONTRACT.md "Scopes and limits"),
 * with IETF `RateLimit-Limit`/`-Remaining`/`-Reset` headers on every response and `Retry-After` on a 429.
 * express-rate-limit does the HTTP side; `DatabaseRateLimitStore` keeps the counters in the database so the limit
 * holds across several server processes. Requests without a valid key are counted per client IP.
 *
 * For an authenticated request the hit is counted in the key lookup's own statement (http/auth.ts
 * `resolveCredential`): the store is told the result with `precounted`, which returns a one-use ticket; the limiter's key
 * generator hands that ticket to `increment`, which answers from it without a second round trip.
 */
import type { Request, RequestHandler } from "express";
import { rateLimit, ipKeyGenerator, type Store, type IncrementResponse, type Options } from "express-rate-limit";
import { RATE_LIMIT } from "@stageline/shared";
import type { PrismaClient } from "../generated/prisma/client";
import { decrementWindow, incrementWindow, reserveHits, resetWindow } from "../db/rate-limit";
import { domainError } from "../services/errors";
import { sendProblem } from "./problem";

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** The ticket of a hit already counted by the key lookup (see `DatabaseRateLimitStore.precounted`). */
      rateLimitTicket?: string;
    }
  }
}

/**
 * The counter key prefix of an API key (`key:<api key id>`); an OAuth access token counts against its grant
 * (`grant:<grant id>`, services/oauth-tokens.ts); other requests use `ip:<address>`.
 */
export { API_KEY_COUNTER_PREFIX } from "../services/api-keys";

/** Separates a counter key from the sequence number of a precounted ticket. */
const TICKET_SEPARATOR = "#";

/** express-rate-limit store over the `rate_limit_windows` table; windows are aligned to the clock. */
export class DatabaseRateLimitStore implements Store {
  private windowMs = RATE_LIMIT.windowSeconds * 1000;
  readonly localKeys = false;
  private readonly precountedHits = new Map<string, IncrementResponse>();
  private ticketSeq = 0;

  constructor(private readonly prisma: PrismaClient) {}

  init(options: Options): void {
    this.windowMs = options.windowMs;
  }

  /** Start of the fixed window that contains `now` (ms since the epoch). */
  windowStart(now = Date.now()): Date {
    return new Date(Math.floor(now / this.windowMs) * this.windowMs);
  }

  /**
   * Records a hit that was already counted in the database for counter `key` in the window starting at
   * `windowStart`, `totalHits` being the count it returned.
   * @returns a one-use ticket (`<key>#<n>`) that `increment` redeems for that result; the limiter's key generator
   * must return it for the same request (app.ts puts the limiter right after `resolveCredential`).
   */
  precounted(key: string, totalHits: number, windowStart: Date): string {
    const ticket = `${key}${TICKET_SEPARATOR}${++this.ticketSeq}`;
    this.precountedHits.set(ticket, { totalHits, resetTime: new Date(windowStart.getTime() + this.windowMs) });
    return ticket;
  }

  async increment(key: string): Promise<IncrementResponse> {
    const precounted = this.precountedHits.get(key);
    if (precounted) {
      this.precountedHits.delete(key);
      return precounted;
    }
    const start = this.windowStart();
    const totalHits = await incrementWindow(this.prisma, counterKey(key), start);
    return { totalHits, resetTime: new Date(start.getTime() + this.windowMs) };
  }

  /**
   * Reserves up to `wanted` more hits for the credential whose counter key is `counterKey` (AuthContext `counterKey`:
   * `key:<id>` or `grant:<id>`) in the current window, never past `limit` (db/rate-limit.ts
   * `reserveHits`: atomic across processes). For the units of a JSON-RPC batch beyond its first (mcp/edge.ts).
   * @returns `granted` (0..wanted), `remaining` (what the window has left after it) and `resetTime` (the window's end).
   */
  async reserve(counterKey: string, wanted: number, limit: number): Promise<{ granted: number; remaining: number; resetTime: Date }> {
    const start = this.windowStart();
    const { granted, hits } = await reserveHits(this.prisma, counterKey, start, wanted, limit);
    return { granted, remaining: Math.max(limit - hits, 0), resetTime: new Date(start.getTime() + this.windowMs) };
  }

  async decrement(key: string): Promise<void> {
    await decrementWindow(this.prisma, counterKey(key), this.windowStart());
  }

  async resetKey(key: string): Promise<void> {
    await resetWindow(this.prisma, counterKey(key));
  }
}

/** The counter key of a limiter key or a precounted ticket. */
function counterKey(key: string): string {
  const sep = key.indexOf(TICKET_SEPARATOR);
  return sep < 0 ? key : key.slice(0, sep);
}

/** The limiter key: the precounted ticket, else the credential's counter once authenticated, else the client IP. */
function limiterKey(req: Request): string {
  if (req.rateLimitTicket) return req.rateLimitTicket;
  return req.auth?.counterKey ?? `ip:${ipKeyGenerator(req.ip ?? "unknown")}`;
}

/** The rate limiter: the express-rate-limit middleware and its database store. */
export interface RateLimiter {
  middleware: RequestHandler;
  /**
   * The same limit for the MCP endpoint (CONTRACT "MCP server": a 429 becomes a tool error that says when to retry):
   * over the limit it sets `req.rateLimitedFor` (seconds to wait) and lets the request through instead of
   * answering 429; the `RateLimit-*` headers are set alike.
   */
  markingMiddleware: RequestHandler;
  store: DatabaseRateLimitStore;
  /** Requests per window. */
  limit: number;
  /** The fixed window's length in seconds. */
  windowSeconds: number;
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** Seconds until the key's window resets, when this request was over the rate limit (markingMiddleware). */
      rateLimitedFor?: number;
    }
  }
}

/**
 * Builds the rate limiter. `limit` (requests per window) defaults to the contract's 60; benchmarks may raise it.
 * `windowSeconds` (the fixed window's length) defaults to the contract's 60; tests may shorten it
 * (RATE_LIMIT_WINDOW_SECONDS).
 */
export function createRateLimiter(prisma: PrismaClient, limit: number = RATE_LIMIT.limit, windowSeconds: number = RATE_LIMIT.windowSeconds): RateLimiter {
  const store = new DatabaseRateLimitStore(prisma);
  const common = {
    windowMs: windowSeconds * 1000,
    limit,
    standardHeaders: "draft-6",
    legacyHeaders: false,
    store,
    keyGenerator: limiterKey,
    // One store serves both limiters; a request passes only one of them (the MCP path or the rest of /v1/ext).
    validate: { keyGeneratorIpFallback: false, unsharedStore: false },
  } as const;
  const middleware = rateLimit({
    ...common,
    handler: (_req, res, _next, options) => {
      const retryAfter = res.getHeader("Retry-After");
      sendProblem(
        res,
        domainError(
          "rate_limited",
          `Rate limit of ${options.limit} requests per ${windowSeconds} seconds exceeded. Retry after ${retryAfter} seconds.`,
        ),
      );
    },
  });
  const markingMiddleware = rateLimit({
    ...common,
    handler: (req, res, next) => {
      req.rateLimitedFor = Number(res.getHeader("Retry-After")) || windowSeconds;
      res.removeHeader("Retry-After");
      next();
    },
  });
  return { middleware, markingMiddleware, store, limit, windowSeconds };
}
