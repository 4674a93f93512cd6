/**
 * Target URL rules of REST-hook subscriptions (CONTRACT.md "Events and deliveries"): `https` only in production;
 * `http` and loopback targets only when the server runs in development or test mode.
 *
 * Pure: the URL is judged as written, with no DNS lookup. In production it refuses `localhost` (and `*.localhost`)
 * and IP literals that point into the server's own network (webhooks/address-kind.ts: unspecified, loopback,
 * private including carrier-grade NAT, link-local, unique-local), IPv4-mapped IPv6 included. The WHATWG URL parser has already normalised the host (`0x7f.1` and `2130706433` become `127.0.0.1`).
 */
import net from "node:net";
import type { Mode } from "../config/config";
import { nonPublicKind } from "./address-kind";

/**
 * The address kinds refused when subscribing: addresses of the server's own network. Multicast and reserved
 * (documentation, benchmarking, translation) literals are accepted here as before and fail at delivery time, where
 * deliver.ts refuses every non-public address.
 */
const REFUSED_AT_SUBSCRIBE = new Set(["unspecified", "loopback", "private", "link-local", "unique-local"]);

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
  const literal = host.startsWith("[") ? host.slice(1, -1) : host;
  const kind = net.isIP(literal) ? nonPublicKind(literal) : null;
  if (kind && REFUSED_AT_SUBSCRIBE.has(kind)) {
    return `target_url must be reachable on the public internet; ${parsed.hostname} is a ${kind} address.`;
  }
  return null;
}
