/**
 * Target URL rules of REST-hook subscriptions (CONTRACT.md "Events and deliveries"): `https` only in production;
 * `http` and loopback targets only when the server runs in development or test mode. Every mode refuses IP literals
 * that point into the server's own network (webhooks/address-kind.ts: unspecified, private including carrier-grade
 * NAT, link-local such as cloud metadata at 169.254.169.254, unique-local, IPv4-compatible IPv6), IPv4-mapped IPv6
 * included; production also refuses loopback, `localhost` and `*.localhost`.
 *
 * Pure: the URL is judged as written, with no DNS lookup (deliver.ts judges resolved addresses at connect time). The WHATWG URL parser has already normalised the host (`0x7f.1` and `2130706433` become `127.0.0.1`).
 */
import net from "node:net";
import type { Mode } from "../config/config";
import { nonPublicKind } from "./address-kind";

/**
 * The address kinds refused when subscribing: addresses of the server's own network. Multicast and reserved
 * (documentation, benchmarking, translation) literals are accepted here as before and fail at delivery time, where
 * deliver.ts refuses every non-public address.
 */
const REFUSED_AT_SUBSCRIBE = new Set(["unspecified", "loopback", "private", "link-local", "unique-local", "ipv4-compatible"]);

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
  if (parsed.username || parsed.password) {
    return "target_url must not contain a user name or password; put credentials in the path or a query parameter instead.";
  }
  const local = mode !== "production";
  if (!local && parsed.protocol !== "https:") {
    return "target_url must use https:// in production; plain http is only accepted by development and test servers.";
  }
  const host = parsed.hostname.replace(/\.$/, "").toLowerCase();
  if (!local && (host === "localhost" || host.endsWith(".localhost"))) {
    return `target_url must be reachable on the public internet; ${host} points to the server itself.`;
  }
  const literal = host.startsWith("[") ? host.slice(1, -1) : host;
  const kind = net.isIP(literal) ? nonPublicKind(literal) : null;
  if (kind && REFUSED_AT_SUBSCRIBE.has(kind) && !(local && kind === "loopback")) {
    return `target_url must be reachable on the public internet; ${parsed.hostname} is a ${kind} address.`;
  }
  return null;
}
