/**
 * Which IP addresses are not public (SSRF guard of REST-hook targets, CONTRACT.md "Events and deliveries"): one
 * classification, used both when a subscription's URL is checked (target-url.ts, IP literals as written) and when a
 * delivery connects (deliver.ts, every address the hostname resolves to). Built on Node's `net.BlockList`.
 * Ranges: RFC 6890 special-purpose registries (IPv4 and IPv6). IPv4-mapped IPv6 (`::ffff:a.b.c.d`) is judged by
 * the IPv4 ranges, which BlockList applies to mapped addresses itself.
 */
import net from "node:net";

/** Non-public kinds, most specific first; the first whose ranges contain an address names it. */
const KINDS: [kind: string, v4: string[], v6: string[]][] = [
  ["unspecified", ["0.0.0.0/8"], ["::/128"]],
  ["loopback", ["127.0.0.0/8"], ["::1/128"]],
  // IPv4-compatible IPv6 (RFC 4291 2.5.5.1, deprecated): `::127.0.0.1` would otherwise reach IPv4 hosts unjudged.
  ["ipv4-compatible", [], ["::/96"]],
  ["private", ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10"], []],
  ["link-local", ["169.254.0.0/16"], ["fe80::/10"]],
  ["unique-local", [], ["fc00::/7"]],
  ["multicast", ["224.0.0.0/4"], ["ff00::/8"]],
  [
    "reserved",
    ["192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4"],
    ["64:ff9b::/96", "64:ff9b:1::/48", "100::/64", "2001::/32", "2001:db8::/32", "2002::/16"],
  ],
];

const LISTS = KINDS.map(([kind, v4, v6]) => {
  const list = new net.BlockList();
  for (const cidr of v4) list.addSubnet(cidr.split("/")[0]!, Number(cidr.split("/")[1]), "ipv4");
  for (const cidr of v6) list.addSubnet(cidr.split("/")[0]!, Number(cidr.split("/")[1]), "ipv6");
  return { kind, list };
});

/**
 * The non-public kind of an IP literal (no brackets): "unspecified", "loopback", "private", "link-local",
 * "unique-local", "multicast" or "reserved"; null for a public unicast address; "invalid" when `ip` is no IP literal.
 */
export function nonPublicKind(ip: string): string | null {
  const family = net.isIP(ip);
  if (family === 0) return "invalid";
  const type = family === 4 ? "ipv4" : "ipv6";
  return LISTS.find(({ list }) => list.check(ip, type))?.kind ?? null;
}

/** True when `ip` (an IPv4 or IPv6 literal, no brackets) is a public unicast address. False for anything else. */
export function isPublicAddress(ip: string): boolean {
  return nonPublicKind(ip) === null;
}

/**
 * True when a delivery may connect to `ip`: a public unicast address, or, when `allowLoopback` (development and test
 * servers, for local receivers), a loopback one. Private, link-local (cloud metadata), unique-local and the rest are
 * refused in every mode.
 */
export function isDeliverableAddress(ip: string, allowLoopback: boolean): boolean {
  const kind = nonPublicKind(ip);
  return kind === null || (allowLoopback && kind === "loopback");
}
