import { BlockList, isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * IPv4 networks a webhook never connects to unless private targets are allowed, beside what
 * ipaddr.js names as not `unicast` (loopback, private, link-local, carrier-grade NAT,
 * multicast, broadcast, reserved, documentation, benchmarking, AMT, AS112, …).
 */
const blockedV4 = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blockedV4.addSubnet(net, prefix, 'ipv4');
}

const cidr = (text: string) => ipaddr.IPv6.parseCIDR(text);
/** Global unicast: every public IPv6 address lies in it (loopback, link-local, unique-local, multicast, discard-only `100::/64`, … lie outside). */
const GLOBAL_UNICAST = cidr('2000::/3');
/** Inside global unicast, the IANA special-purpose ranges that are not public destinations. */
const SPECIAL_V6 = [
  // IETF protocol assignments: Teredo (judged by its embedded addresses below), benchmarking, AMT, AS112, ORCHID, drone tags, …
  cidr('2001::/23'),
  // Documentation (RFC 3849, RFC 9637).
  cidr('2001:db8::/32'),
  cidr('3fff::/20'),
  // AS112 redirection (RFC 7534).
  cidr('2620:4f:8000::/48'),
];
/** Forms that carry an IPv4 address in their last 32 bits: IPv4-mapped, SIIT (IPv4-translated) and NAT64's well-known prefix. */
const IPV4_IN_LAST_32 = [cidr('::ffff:0:0/96'), cidr('::ffff:0:0:0/96'), cidr('64:ff9b::/96')];
/** IPv4-compatible (deprecated): the first 96 bits are zero. */
const IPV4_COMPATIBLE = cidr('::/96');
const SIX_TO_FOUR = cidr('2002::/16');
const TEREDO = cidr('2001::/32');

function ipv4Of(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

function isPublicIPv4(address: ipaddr.IPv4): boolean {
  return address.range() === 'unicast' && !blockedV4.check(address.toString(), 'ipv4');
}

function isPublicIPv6(address: ipaddr.IPv6): boolean {
  const parts = address.parts;
  // Embedded IPv4 forms: the IPv4 address is where the connection goes.
  if (IPV4_IN_LAST_32.some((range) => address.match(range)) || address.match(IPV4_COMPATIBLE)) return isPublicIPv4(ipv4Of(parts[6], parts[7]));
  if (address.match(SIX_TO_FOUR)) return isPublicIPv4(ipv4Of(parts[1], parts[2]));
  // Teredo: the server's address, then the client's, stored inverted (obfuscated).
  if (address.match(TEREDO)) return isPublicIPv4(ipv4Of(parts[2], parts[3])) && isPublicIPv4(ipv4Of(~parts[6] & 0xffff, ~parts[7] & 0xffff));
  if (!address.match(GLOBAL_UNICAST) || SPECIAL_V6.some((range) => address.match(range))) return false;
  // ISATAP interface identifiers (`…:0:5efe:a.b.c.d`, `…:200:5efe:a.b.c.d`) name an IPv4 host too.
  if ((parts[4] === 0 || parts[4] === 0x200) && parts[5] === 0x5efe) return isPublicIPv4(ipv4Of(parts[6], parts[7]));
  return true;
}

/**
 * Whether `address` (an IP literal, as a URL's host or a DNS answer gives it) is a public
 * destination. Parsed, never matched as text: an IPv6 address that embeds an IPv4 address
 * (IPv4-mapped, IPv4-compatible, SIIT, NAT64 `64:ff9b::/96`, 6to4, Teredo server and client,
 * ISATAP) is judged by that IPv4 address; otherwise it must be global unicast outside the
 * IANA special-purpose ranges. A zone index (`fe80::1%eth0`) is never public.
 */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0 || address.includes('%')) return false;
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = family === 4 ? ipaddr.IPv4.parse(address) : ipaddr.IPv6.parse(address);
  } catch {
    return false;
  }
  return parsed.kind() === 'ipv4' ? isPublicIPv4(parsed as ipaddr.IPv4) : isPublicIPv6(parsed as ipaddr.IPv6);
}

export type UrlVerdict = { ok: true; url: URL } | { ok: false; reason: string };

/**
 * The static part of the URL rules: absolute, https (http only when private targets are
 * allowed), no credentials, an IP literal host must be public. Names are resolved and checked
 * at registration and again on every connection.
 */
export function checkEndpointUrl(raw: string, allowPrivate: boolean): UrlVerdict {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'url must be an absolute URL' };
  }
  if (raw.length > 2048) return { ok: false, reason: 'url must be at most 2048 characters' };
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) return { ok: false, reason: 'url must use https' };
  if (url.username || url.password) return { ok: false, reason: 'url must not carry credentials' };
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && isIP(host) !== 0 && !isPublicAddress(host)) return { ok: false, reason: 'url must resolve to public addresses only' };
  if (!allowPrivate && (host === 'localhost' || host.endsWith('.localhost'))) return { ok: false, reason: 'url must resolve to public addresses only' };
  return { ok: true, url };
}
