/**
 * Target URL rules of REST-hook subscriptions (CONTRACT.md "Events and deliveries"): `https` only in production;
 * `http` and loopback targets only when the server runs in development or test mode.
 *
 * Pure: the URL is judged as written, with no DNS lookup. In production it refuses `localhost` (and `*.localhost`)
 * and IP literals that point into the server's own network: unspecified, loopback, private (RFC 1918 and the
 * carrier-grade NAT range), link-local and unique-local addresses, including IPv4 addresses written as IPv4-mapped
 * IPv6. The WHATWG URL parser has already normalised the host (`0x7f.1` and `2130706433` become `127.0.0.1`).
 */
import type { Mode } from "../config/config";

/**
 * Checks a subscription's target URL for the server's `mode`.
 * @returns null when the URL is acceptable, otherwise the reason, phrased for the user (it becomes the problem
 *   detail of a `422 invalid_reference`).
 */
export function checkTargetUrl(url: string, mode: Mode): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "target_url must be an absolute URL such as https://hooks.example.com/stageline.";
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
    return `target_url must start with https:// (got ${parsed.protocol}//).`;
  }
  if (mode !== "production") return null;

  if (parsed.protocol !== "https:") {
    return "target_url must use https:// in production; plain http is only accepted by development and test servers.";
  }
  const host = parsed.hostname.replace(/\.$/, "").toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost")) {
    return `target_url must be reachable on the public internet; ${host} points to the server itself.`;
  }
  const kind = host.startsWith("[") ? ipv6Kind(host.slice(1, -1)) : ipv4Kind(host);
  if (kind) {
    return `target_url must be reachable on the public internet; ${parsed.hostname} is a ${kind} address.`;
  }
  return null;
}

/** The non-public kind of a dotted IPv4 literal, or null when `host` is public or not an IPv4 literal. */
function ipv4Kind(host: string): string | null {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (!match) return null;
  const [a, b] = [Number(match[1]), Number(match[2])];
  return ipv4OctetsKind(a, b);
}

function ipv4OctetsKind(a: number, b: number): string | null {
  if (a === 0) return "unspecified";
  if (a === 127) return "loopback";
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return "private";
  if (a === 100 && b >= 64 && b <= 127) return "private"; // carrier-grade NAT (RFC 6598)
  if (a === 169 && b === 254) return "link-local";
  return null;
}

/** The non-public kind of an IPv6 literal (without brackets), or null when it is public or not parseable. */
function ipv6Kind(literal: string): string | null {
  const words = parseIpv6(literal);
  if (!words) return null;
  const [w0, w1, w2, w3, w4, w5, w6, w7] = words as [number, number, number, number, number, number, number, number];
  const upperZero = w0 === 0 && w1 === 0 && w2 === 0 && w3 === 0 && w4 === 0;
  if (upperZero && w5 === 0 && w6 === 0 && w7 === 0) return "unspecified";
  if (upperZero && w5 === 0 && w6 === 0 && w7 === 1) return "loopback";
  if (upperZero && w5 === 0xffff) return ipv4OctetsKind(w6 >> 8, w6 & 0xff); // ::ffff:a.b.c.d
  if ((w0 & 0xffc0) === 0xfe80) return "link-local";
  if ((w0 & 0xfe00) === 0xfc00) return "unique-local";
  return null;
}

/** Parses an IPv6 literal into its eight 16-bit words (handles `::` and a trailing dotted IPv4 part). */
function parseIpv6(literal: string): number[] | null {
  let text = literal.toLowerCase();
  const dotted = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((w) => (/^[0-9a-f]{1,4}$/.test(w) ? parseInt(w, 16) : NaN)));
  const head = parse(halves[0]!);
  const tail = halves.length === 2 ? parse(halves[1]!) : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const words = [...head, ...new Array<number>(halves.length === 2 ? missing : 0).fill(0), ...tail];
  return words.some(Number.isNaN) ? null : words;
}
