/**
 * Structured logging (pino). One root logger per server; request logs come from pino-http in app.ts with the request
 * and response serializers below. No secret reaches a log line (issue 12; issue 19 item 3; OWASP ASVS 7.1.1, 7.1.2;
 * OWASP Logging Cheat Sheet "Data to exclude"):
 *
 * - **Headers** are redacted by name, by default: every request or response header whose name contains `auth`,
 *   `token`, `key`, `secret`, `cookie`, `session`, `csrf`, `password` or `signature` (so `authorization`,
 *   `x-api-key`, `x-admin-token`, `cookie`, `set-cookie`, and also an unknown `x-forwarded-authorization`) is
 *   logged as `[redacted]`; a new credential header needs no change here. `Referer` and `Location` are URLs of this
 *   server's and are masked like the request URL.
 * - **URLs** are logged with secret path segments and secret query values masked (`safeUrl`): the token of an
 *   invitation link (`/console/invite/[redacted]`), any segment or value that looks like a Stageline secret
 *   (`sl_` API key, `whsec_` signing secret) or a long random token, and the value of every query parameter whose
 *   name looks like a credential's (`?api_key=[redacted]`). Parsed `query` and `params` objects are not logged.
 * - **Objects** logged by the code: top-level fields named `secret`, `key`, `password` and `token` are redacted.
 */
import pino, { type Logger } from "pino";

/** What a redacted value is replaced with. */
export const REDACTED = "[redacted]";

/** A header or query parameter whose name matches this carries a credential (case-insensitive). */
const SECRET_NAME = /auth|token|key|secret|cookie|session|csrf|passw|signature|credential/i;

/**
 * Query parameters whose values are an item's field values (the items list's `q` and `name` filters): personal
 * data that must not outlive the item in a log (CONTRACT "Item deletion and erasure": logs never hold its values).
 */
const PERSONAL_DATA_PARAMS = new Set(["q", "name"]);

/** Paths whose segment after the prefix is a bearer secret (the invitation link's one-time token). */
const SECRET_PATH_PREFIXES = ["/console/invite/"];

/**
 * A path segment or query value that looks like a secret whatever its name: a Stageline API key or webhook signing
 * secret, or a long run of token characters (32+ base64url/base64 characters, as `crypto.randomBytes(24+)` gives).
 * A UUID (an id, not a secret: ids are what an operator needs to read) is not matched.
 */
const SECRET_VALUE = /^(sl_|whsec_)|^[A-Za-z0-9_+/=-]{32,}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function secretValue(value: string): boolean {
  let decoded = value;
  try {
    decoded = decodeURIComponent(value);
  } catch {
    // a malformed escape: judge the raw text
  }
  return !UUID.test(decoded) && SECRET_VALUE.test(decoded);
}

/**
 * The request URL `url` (path and query, as `req.originalUrl`) as it may be logged: the segment after a
 * `SECRET_PATH_PREFIXES` prefix, every segment that looks like a secret, and the value of every query parameter whose
 * name looks like a credential's, is an item field search (`PERSONAL_DATA_PARAMS`), or whose value looks like a secret
 * become `[redacted]`. Other parts are kept as sent
 * (still percent-encoded), so the line still tells which page and which ids were asked for.
 */
export function safeUrl(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  const q = url.indexOf("?");
  const path = q === -1 ? url : url.slice(0, q);
  const query = q === -1 ? null : url.slice(q + 1);
  let safePath = path
    .split("/")
    .map((segment) => (secretValue(segment) ? REDACTED : segment))
    .join("/");
  for (const prefix of SECRET_PATH_PREFIXES) {
    if (safePath.startsWith(prefix) && safePath.length > prefix.length) {
      const rest = safePath.slice(prefix.length);
      const slash = rest.indexOf("/");
      safePath = prefix + REDACTED + (slash === -1 ? "" : rest.slice(slash));
    }
  }
  if (query === null) return safePath;
  const safeQuery = query
    .split("&")
    .map((pair) => {
      const eq = pair.indexOf("=");
      if (eq === -1) return secretValue(pair) ? REDACTED : pair;
      const name = pair.slice(0, eq);
      const decodedName = safeDecode(name);
      const hide = SECRET_NAME.test(decodedName) || PERSONAL_DATA_PARAMS.has(decodedName) || secretValue(pair.slice(eq + 1));
      return hide ? `${name}=${REDACTED}` : pair;
    })
    .join("&");
  return `${safePath}?${safeQuery}`;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, " "));
  } catch {
    return s;
  }
}

/**
 * A copy of `headers` with the value of every header whose name looks like a credential's (`SECRET_NAME`) replaced
 * by `[redacted]`. Works for request headers (`IncomingHttpHeaders`) and response headers (`getHeaders()`).
 */
export function redactHeaders(headers: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!headers) return headers;
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (SECRET_NAME.test(name)) out[name] = REDACTED;
    else if (URL_HEADERS.has(name.toLowerCase()) && typeof value === "string") out[name] = safeHeaderUrl(value);
    else out[name] = value;
  }
  return out;
}

/**
 * Headers whose value is a URL of this server's: `Referer` (a page loaded from an invitation link sends the link,
 * token included, as the Referer of its style sheet and script: `Referrer-Policy: same-origin`) and `Location`.
 */
const URL_HEADERS = new Set(["referer", "location", "content-location"]);

/** An absolute or relative URL header value with its path and query passed through `safeUrl`. */
function safeHeaderUrl(value: string): string {
  const match = /^([a-z][a-z0-9+.-]*:\/\/[^/?#]*)?([^#]*)/i.exec(value)!;
  return (match[1] ?? "") + (safeUrl(match[2] ?? "") ?? "");
}

/** What pino-http's standard request serializer gives (pino-std-serializers), with the raw request. */
interface SerializedRequest {
  id?: unknown;
  method?: string;
  url?: string;
  headers?: Record<string, unknown>;
  remoteAddress?: string;
  remotePort?: number;
}

/**
 * pino-http's `serializers.req`: the request's id, method, `safeUrl` URL, `redactHeaders` headers and remote
 * address. Leaves out the parsed `query` and `params` the standard serializer adds (they hold the same secrets).
 */
export function requestSerializer(req: SerializedRequest) {
  return { id: req.id, method: req.method, url: safeUrl(req.url), headers: redactHeaders(req.headers), remoteAddress: req.remoteAddress, remotePort: req.remotePort };
}

/** pino-http's `serializers.res`: the status code and the `redactHeaders` response headers (`set-cookie` among them). */
export function responseSerializer(res: { statusCode?: number; headers?: Record<string, unknown> }) {
  return { statusCode: res.statusCode, headers: redactHeaders(res.headers) };
}

/** Fields of objects the code logs that are redacted wherever they are passed at the top level. */
const REDACT_PATHS = ["secret", "key", "password", "token"];

/** Creates the root logger at `level` ("silent" turns it off). Secret-named top-level fields are redacted. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: "stageline" },
    redact: { paths: REDACT_PATHS, censor: REDACTED },
    serializers: { err: errorSerializer },
  });
}

/**
 * The `err` serializer: the error's type, `code`, message and stack only. Driver errors carry more enumerable
 * members (PostgreSQL's `detail` such as `Key (x)=(value)`, `where`, the failing query and its parameters) that can
 * hold request or stored values; they are left out (CONTRACT "Item deletion and erasure": logs never contain
 * request or event bodies).
 */
export function errorSerializer(err: unknown): unknown {
  if (!(err instanceof Error)) return err;
  const code = (err as { code?: unknown }).code;
  return { type: err.name, message: err.message, ...(typeof code === "string" || typeof code === "number" ? { code } : {}), stack: err.stack };
}
