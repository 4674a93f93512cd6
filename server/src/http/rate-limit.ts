/**
 * The per-key rate limit: 60 requests per fixed 60-second window (spec "Limits", CONTRACT.md "Scopes and limits"),
 * with IETF `RateLimit-Limit`/`-Remaining`/`-Reset` headers on every response and `Retry-After` on a 429.
 * express-rate-limit does the HTTP side; `DatabaseRateLimitStore` keeps the counters in the database so the limit
 * holds across several server processes. Requests without a valid key are counted per client IP.
 */
import type { Request, RequestHandler } from "express";
import { rateLimit, ipKeyGenerator, type Store, type IncrementResponse, type Options } from "express-rate-limit";
import { RATE_LIMIT } from "@stageline/shared";
import type { PrismaClient } from "../generated/prisma/client";
import { decrementWindow, incrementWindow, resetWindow } from "../db/rate-limit";
import { problem, sendProblem } from "./problem";

/** express-rate-limit store over the `rate_limit_windows` table; windows are aligned to the clock. */
export class DatabaseRateLimitStore implements Store {
  private windowMs = RATE_LIMIT.windowSeconds * 1000;
  readonly localKeys = false;
  constructor(private readonly prisma: PrismaClient) {}

  init(options: Options): void {
    this.windowMs = options.windowMs;
  }

  private windowStart(now = Date.now()): Date {
    return new Date(Math.floor(now / this.windowMs) * this.windowMs);
  }

  async increment(key: string): Promise<IncrementResponse> {
    const start = this.windowStart();
    const totalHits = await incrementWindow(this.prisma, key, start);
    return { totalHits, resetTime: new Date(start.getTime() + this.windowMs) };
  }

  async decrement(key: string): Promise<void> {
    await decrementWindow(this.prisma, key, this.windowStart());
  }

  async resetKey(key: string): Promise<void> {
    await resetWindow(this.prisma, key);
  }
}

/** The limiter key: the API key's id once authenticated, else the client IP. */
function limiterKey(req: Request): string {
  const keyId = req.auth?.keyId;
  return keyId ? `key:${keyId}` : `ip:${ipKeyGenerator(req.ip ?? "unknown")}`;
}

/**
 * Builds the rate-limit middleware. `limit` defaults to the contract's 60; benchmarks may raise it.
 */
export function rateLimitMiddleware(prisma: PrismaClient, limit: number = RATE_LIMIT.limit): RequestHandler {
  return rateLimit({
    windowMs: RATE_LIMIT.windowSeconds * 1000,
    limit,
    standardHeaders: "draft-6",
    legacyHeaders: false,
    store: new DatabaseRateLimitStore(prisma),
    keyGenerator: limiterKey,
    validate: { keyGeneratorIpFallback: false },
    handler: (_req, res, _next, options) => {
      const retryAfter = res.getHeader("Retry-After");
      sendProblem(
        res,
        problem(
          "rate_limited",
          `Rate limit of ${options.limit} requests per ${RATE_LIMIT.windowSeconds} seconds exceeded. Retry after ${retryAfter} seconds.`,
        ),
      );
    },
  });
}
