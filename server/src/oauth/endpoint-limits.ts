/**
 * The limits on the authorization server's unauthenticated endpoints that write state (CONTRACT "Connect with OAuth
 * 2.1": nothing anyone does may slow down or exhaust the service). Counted per client IP (`req.ip`, so TRUST_PROXY
 * decides which X-Forwarded-For is believed; IPv6 per /56 like every limiter here) over the database store the API
 * uses (http/rate-limit.ts), so a limit holds across server processes. Fixed windows aligned to the clock.
 *
 * | endpoint                         | per client IP | window     | why this number |
 * |----------------------------------|---------------|------------|-----------------|
 * | POST /oauth/reg (RFC 7591 DCR)   | 60            | 10 minutes | every call stores a `Client` record (purged after 7 days unused: purge.ts). A well-behaved MCP client registers once per user and server and keeps its client id, so even a big MCP host behind a few shared egress IPs stays under 6 new users a minute per IP; a flood stores at most 60 records per IP per 10 minutes, about 60,000 per IP before the purge catches up. Hosts that connect more users than that should use a Client ID Metadata Document: it stores nothing per user and is never counted here. |
 * | GET/POST /oauth/auth             | 300           | 10 minutes | each request starts an `Interaction` (10 minutes) and may touch a `Session` (24 hours). People of one company often share one NAT address: 300 sign-ins per 10 minutes is a whole office connecting at once; a flood keeps at most about 300 live interactions per IP. |
 * | POST /oauth/token                | 600           | 1 minute   | code exchanges and refresh-token rotations. Access tokens live an hour, so an MCP host refreshes every connected user's token hourly from its egress IPs: 600 a minute is 36,000 users per egress IP. An invalid request stores nothing but costs lookups; 10 a second per IP bounds that. |
 * | POST /oauth/token/revocation     | 120           | 1 minute   | a client revokes when a user disconnects, far rarer than refreshes; an invalid request costs a lookup. |
 *
 * Over a limit the answer is 429 with `Retry-After` (seconds) and an RFC 6749 §5.2-style JSON body
 * `{"error":"temporarily_unavailable","error_description":"..."}` (the registered OAuth code for "try again later",
 * RFC 6749 §4.1.2.1), never the provider's HTML error page; the request does not reach the provider, so nothing is
 * stored. POST /oauth/auth is off in the provider (oidc-provider's `enableHttpPostMethods`) but counted alike, so
 * turning it on cannot open a gap. The resumed authorization (`/oauth/auth/:uid`, after the console's consent) is not counted: it only
 * finishes an interaction the entry already counted.
 */
import type { RequestHandler } from "express";
import { ipKeyGenerator, rateLimit } from "express-rate-limit";
import type { PrismaClient } from "../generated/prisma/client";
import { DatabaseRateLimitStore } from "../http/rate-limit";

/** One endpoint's limit: at most `perIp` requests from one client IP in each fixed window of `windowSeconds`. */
export interface EndpointLimit {
  perIp: number;
  windowSeconds: number;
}

/** The limited endpoints (their paths under `/oauth`). */
export type LimitedEndpoint = "registration" | "authorization" | "token" | "revocation";

/** The limits (see the table above for the reason behind each number). */
export const OAUTH_ENDPOINT_LIMITS: Readonly<Record<LimitedEndpoint, EndpointLimit>> = {
  registration: { perIp: 60, windowSeconds: 600 },
  authorization: { perIp: 300, windowSeconds: 600 },
  token: { perIp: 600, windowSeconds: 60 },
  revocation: { perIp: 120, windowSeconds: 60 },
};

/** Where each limit applies: HTTP methods and the exact path (Express matching: case-insensitive, trailing slash). */
const ROUTES: Readonly<Record<LimitedEndpoint, { methods: readonly ("get" | "post")[]; path: string }>> = {
  registration: { methods: ["post"], path: "/oauth/reg" },
  authorization: { methods: ["get", "post"], path: "/oauth/auth" },
  token: { methods: ["post"], path: "/oauth/token" },
  revocation: { methods: ["post"], path: "/oauth/token/revocation" },
};

/** One limiter with its place: mount `handler` for each of `methods` on `path` (router.ts). */
export interface EndpointLimiter {
  endpoint: LimitedEndpoint;
  methods: readonly ("get" | "post")[];
  path: string;
  handler: RequestHandler;
}

/**
 * The limiters of the four endpoints, each with its own counters (`oauth-<endpoint>-ip:<address>`).
 * @param overrides replaces some limits (config `oauthEndpointLimits`: tests only, never read from the environment).
 */
export function oauthEndpointLimiters(prisma: PrismaClient, overrides: Partial<Record<LimitedEndpoint, EndpointLimit>> = {}): EndpointLimiter[] {
  return (Object.keys(ROUTES) as LimitedEndpoint[]).map((endpoint) => {
    const { perIp, windowSeconds } = overrides[endpoint] ?? OAUTH_ENDPOINT_LIMITS[endpoint];
    const handler = rateLimit({
      windowMs: windowSeconds * 1000,
      limit: perIp,
      store: new DatabaseRateLimitStore(prisma),
      standardHeaders: "draft-6",
      legacyHeaders: false,
      keyGenerator: (req) => `oauth-${endpoint}-ip:${ipKeyGenerator(req.ip ?? "unknown")}`,
      validate: { keyGeneratorIpFallback: false, trustProxy: false },
      handler: (_req, res) => {
        const retryAfter = String(res.getHeader("Retry-After") ?? windowSeconds);
        res
          .status(429)
          .set("cache-control", "no-store")
          .json({
            error: "temporarily_unavailable",
            error_description: `Too many requests to ${ROUTES[endpoint].path} from this address (at most ${perIp} per ${windowSeconds} seconds). Retry after ${retryAfter} seconds.`,
          });
      },
    });
    return { endpoint, ...ROUTES[endpoint], handler };
  });
}
