/**
 * The console's limits on failed attempts (OWASP Authentication Cheat Sheet, "Protect against automated attacks"):
 * failures are counted per account and per client IP over the database store the API uses (http/rate-limit.ts), so
 * the limits hold across server processes; a successful attempt (HTTP status below 400) does not count.
 *
 * | what                                   | per account | per client IP | window     |
 * |----------------------------------------|-------------|---------------|------------|
 * | sign-in (email and password)           | 10          | 50            | 15 minutes |
 * | two-factor codes (second step, setup,  | 5           | 50            | 15 minutes |
 * | turning off, new recovery codes)       |             |               |            |
 *
 * Five wrong codes per 15 minutes against three valid 6-digit codes (±1 step) gives an attacker with the password
 * a chance of about 1.5 in 100,000 per window.
 */
import type { Request, RequestHandler, Response } from "express";
import { ipKeyGenerator, rateLimit } from "express-rate-limit";
import type { AppContext } from "../context";
import { DatabaseRateLimitStore } from "../http/rate-limit";

/** Failed sign-ins allowed per account, and per client IP, in one window. */
export const SIGN_IN_LIMITS = { perAccount: 10, perIp: 50, windowMs: 15 * 60 * 1000 } as const;
/** Wrong two-factor codes allowed per account, and per client IP, in one window. */
export const SECOND_FACTOR_LIMITS = { perAccount: 5, perIp: 50, windowMs: 15 * 60 * 1000 } as const;

/**
 * The two limiters (per client IP, then per account) of one kind of attempt: `name` prefixes the counters' keys,
 * `account` names the account a request tries, and `refuse` answers a request over a limit (HTTP 429).
 */
export function failureLimiters(
  ctx: AppContext,
  name: string,
  limits: { perAccount: number; perIp: number; windowMs: number },
  account: (req: Request) => string,
  refuse: (req: Request, res: Response) => void,
): RequestHandler[] {
  const limiter = (limit: number, key: (req: Request) => string) =>
    rateLimit({
      windowMs: limits.windowMs,
      limit,
      store: new DatabaseRateLimitStore(ctx.prisma),
      skipSuccessfulRequests: true,
      standardHeaders: "draft-6",
      legacyHeaders: false,
      keyGenerator: key,
      validate: { keyGeneratorIpFallback: false, trustProxy: false },
      handler: refuse,
    });
  return [
    limiter(limits.perIp, (req) => `${name}-ip:${ipKeyGenerator(req.ip ?? "unknown")}`),
    limiter(limits.perAccount, (req) => `${name}-account:${account(req)}`),
  ];
}
