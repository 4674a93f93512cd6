/**
 * One HTTP attempt of a webhook delivery: `POST target_url` with the exact body bytes and headers given, a hard
 * timeout (CONTRACT.md "Events and deliveries": 10 s), redirects not followed (a 3xx is the attempt's result), and
 * the first ~1 KB of the response kept for the delivery log. Never throws: every failure becomes a result with an
 * `error` text that says what happened in words a webhook owner understands.
 *
 * SSRF guard, in every mode: production contacts only `https` targets whose addresses are all public; development
 * and test servers also contact `http` and loopback targets (local receivers), and nothing else. The check runs inside the socket's own DNS lookup, on the very addresses it then connects to, so a hostname that
 * resolved to a public address when the subscription was created and to a private one now (DNS rebinding) is
 * refused. IP-literal hosts are checked before connecting (no lookup happens for them).
 *
 * Why `node:http(s)` and not `fetch`: Node's built-in fetch gives no hook into its DNS resolution (that needs the
 * `undici` package's Agent), so "resolve, check, then fetch" would leave a check-then-use gap that DNS rebinding
 * exploits. `node:http` never follows redirects and takes the same AbortSignal.
 */
import dns from "node:dns";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import { isDeliverableAddress } from "./address-kind";

/** What to send. */
export interface DeliveryRequest {
  url: string;
  /** The body as a UTF-8 string: exactly these bytes are sent (and were signed). */
  body: string;
  headers: Record<string, string>;
}

export interface DeliveryOptions {
  /** The whole attempt (connect, send, response headers) must finish within this many ms. */
  timeoutMs: number;
  /**
   * Production guard: only `https` targets with public addresses. Otherwise (development and test servers) `http`
   * and loopback addresses are contacted too. Private, link-local and other non-public addresses never are.
   */
  production: boolean;
  /** Aborts the attempt early (dispatcher shutdown backstop). */
  signal?: AbortSignal;
}

/** The result of one attempt, as the delivery log records it. */
export interface AttemptResult {
  /** The response status, or null when no response arrived. */
  status: number | null;
  durationMs: number;
  /** First ~1 KB of the response body (UTF-8, NUL bytes replaced), or null. */
  responseExcerpt: string | null;
  /** The response's `Retry-After` header, if any. */
  retryAfter: string | null;
  /** What went wrong (null for a response of any status, which speaks for itself), e.g. "timed out after 10000 ms". */
  error: string | null;
  /** True when retrying cannot help (a refused or malformed target): the delivery ends as failed. */
  permanent: boolean;
}

/** Bytes of the response body kept in the delivery log. */
export const RESPONSE_EXCERPT_BYTES = 1024;

const USER_AGENT = "Stageline-Webhooks/1.0";

/** A target refused by the SSRF guard. */
class RefusedTargetError extends Error {
  readonly code = "ESTAGELINE_REFUSED";
}

/** What an address must be, and why, for the delivery log: "a public address (production mode ...)". */
function allowedAddresses(production: boolean): string {
  return production
    ? "a public address (production mode delivers only to public addresses)"
    : "a public or loopback address (development and test servers deliver only to public and loopback addresses)";
}

/**
 * A `dns.lookup` that fails when any resolved address is not deliverable (`isDeliverableAddress`). Same contract as
 * `net`'s `lookup` option. Also used for OAuth Client ID Metadata Documents (oauth/metadata-fetch.ts).
 */
export function guardedLookup(production: boolean): net.LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, "", 0);
      const refused = addresses.find((a) => !isDeliverableAddress(a.address, !production));
      if (refused) {
        return callback(new RefusedTargetError(`refused: ${hostname} resolves to ${refused.address}, which is not ${allowedAddresses(production)}`), "", 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

/** The lookup and keep-alive pools of each guard, so a socket opened under one guard is never reused under the other. */
const guards = {
  production: {
    lookup: guardedLookup(true),
    http: new http.Agent({ keepAlive: true, timeout: 4_000 }),
    https: new https.Agent({ keepAlive: true, timeout: 4_000 }),
  },
  local: {
    lookup: guardedLookup(false),
    http: new http.Agent({ keepAlive: true, timeout: 4_000 }),
    https: new https.Agent({ keepAlive: true, timeout: 4_000 }),
  },
};

/**
 * Every header an attempt sends: the caller's (signature and event headers) plus `content-type: application/json`,
 * `content-length` (bytes of `body` as UTF-8) and the `user-agent`. The delivery log records exactly these.
 */
export function deliveryHeaders(request: DeliveryRequest): Record<string, string> {
  return {
    ...request.headers,
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(request.body, "utf8")),
    "user-agent": USER_AGENT,
  };
}

/**
 * Sends one attempt with the headers of `deliveryHeaders`; the caller provides the signature and event headers.
 * @returns the result; never rejects.
 */
export async function sendAttempt(request: DeliveryRequest, options: DeliveryOptions): Promise<AttemptResult> {
  const started = performance.now();
  const done = (part: Partial<AttemptResult>): AttemptResult => ({
    status: null,
    responseExcerpt: null,
    retryAfter: null,
    error: null,
    permanent: false,
    ...part,
    durationMs: Math.max(0, Math.round(performance.now() - started)),
  });

  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return done({ error: `refused: "${request.url}" is not a valid URL`, permanent: true });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return done({ error: `refused: ${url.protocol} targets are not supported (http or https only)`, permanent: true });
  }
  if (options.production && url.protocol !== "https:") {
    return done({ error: "refused: production mode delivers only to https targets", permanent: true });
  }
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (net.isIP(host) && !isDeliverableAddress(host, !options.production)) {
    return done({ error: `refused: ${host} is not ${allowedAddresses(options.production)}`, permanent: true });
  }

  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signals = options.signal ? [timeout, options.signal] : [timeout];
  const isHttps = url.protocol === "https:";
  const guard = options.production ? guards.production : guards.local;
  const body = Buffer.from(request.body, "utf8");

  return new Promise<AttemptResult>((resolve) => {
    let settled = false;
    // Aborting destroys this request only while it is ours: once settled, its socket may serve another request.
    const onAbort = () => req.destroy(new Error("aborted"));
    const finish = (part: Partial<AttemptResult>) => {
      if (settled) return;
      settled = true;
      for (const s of signals) s.removeEventListener("abort", onAbort);
      resolve(done(part));
    };
    const req = (isHttps ? https : http).request(url, {
      method: "POST",
      agent: isHttps ? guard.https : guard.http,
      lookup: guard.lookup,
      headers: deliveryHeaders(request),
    });
    req.on("response", (res) => {
      const status = res.statusCode ?? null;
      const retryAfter = typeof res.headers["retry-after"] === "string" ? res.headers["retry-after"] : null;
      const chunks: Buffer[] = [];
      let size = 0;
      const complete = () =>
        finish({
          status,
          retryAfter,
          responseExcerpt: size ? excerpt(Buffer.concat(chunks)) : null,
          error: status !== null && status >= 300 && status < 400 ? redirectText(res.headers.location) : null,
        });
      res.on("data", (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= RESPONSE_EXCERPT_BYTES) {
          complete();
          res.destroy(); // the rest of a large body is not needed
        }
      });
      res.on("end", complete);
      // The status is known: a body cut short (timeout, reset) still leaves the attempt's outcome decided.
      res.on("error", complete);
      res.on("close", complete);
    });
    req.on("error", (err) => finish(describeFailure(err, timeout.aborted, options.signal?.aborted ?? false, options.timeoutMs, url)));
    for (const s of signals) s.addEventListener("abort", onAbort, { once: true });
    if (signals.some((s) => s.aborted)) onAbort();
    req.end(body);
  });
}

function excerpt(bytes: Buffer): string {
  return bytes.subarray(0, RESPONSE_EXCERPT_BYTES).toString("utf8").replace(/\u0000/g, "\uFFFD");
}

function redirectText(location: string | undefined): string {
  return `redirect not followed${location ? ` (Location: ${location.slice(0, 500)})` : ""}: deliveries go to the subscribed URL only`;
}

function describeFailure(err: Error & { code?: string }, timedOut: boolean, cancelled: boolean, timeoutMs: number, url: URL): Partial<AttemptResult> {
  if (err instanceof RefusedTargetError) return { error: err.message, permanent: true };
  if (timedOut) return { error: `timed out: no response within ${timeoutMs} ms` };
  if (cancelled) return { error: "aborted: the server was shutting down" };
  const target = `${url.hostname}:${url.port || (url.protocol === "https:" ? 443 : 80)}`;
  switch (err.code) {
    case "ECONNREFUSED":
      return { error: `connection refused by ${target}` };
    case "ECONNRESET":
    case "EPIPE":
      return { error: `connection to ${target} closed before a response (${err.code})` };
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return { error: `host not found: ${url.hostname} (${err.code})` };
    case "ETIMEDOUT":
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return { error: `${target} unreachable (${err.code})` };
    default:
      return { error: `${err.code ? `${err.code}: ` : ""}${err.message || "request failed"}`.slice(0, 1000) };
  }
}
