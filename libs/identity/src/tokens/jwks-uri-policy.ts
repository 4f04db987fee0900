import { type LookupAddress, lookup as dnsLookup } from 'node:dns';
import { request as httpsRequest } from 'node:https';
import { BlockList, isIP } from 'node:net';
import { customFetch, type FetchImplementation } from 'jose';

/**
 * Where an operator-configured `jwksUri` may point (no SSRF): `https` only, and never
 * at a loopback, private, link-local or otherwise non-public address, unless the development
 * setting JWKS_ALLOW_PRIVATE=true allows both. Checked twice: when the URI is stored (every
 * address the host resolves to) and when it is fetched (the connection uses only the
 * addresses that passed, so a name that later resolves somewhere private is refused too).
 */

const NON_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this" network
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24], // documentation
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128],
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv6');
}

/** The IPv4 address an IPv6 address carries (IPv4-mapped, IPv4-compatible, NAT64, 6to4), if any. */
function embeddedIpv4(address: string): string | null {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:|::|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const groups = expandIpv6(lower);
  if (!groups) return null;
  const fromGroups = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  const zeros = (from: number, to: number) => groups.slice(from, to).every((g) => g === 0);
  if (zeros(0, 5) && (groups[5] === 0xffff || groups[5] === 0)) return fromGroups(groups[6], groups[7]); // ::ffff:a.b.c.d, ::a.b.c.d
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zeros(2, 6)) return fromGroups(groups[6], groups[7]); // 64:ff9b::/96
  if (groups[0] === 0x2002) return fromGroups(groups[1], groups[2]); // 6to4
  return null;
}

function expandIpv6(address: string): number[] | null {
  if (isIP(address) !== 6) return null;
  let text = address;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4[1].split('.').map(Number);
    text = `${text.slice(0, -v4[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const fill = tail === undefined ? 0 : 8 - headGroups.length - tailGroups.length;
  const groups = [...headGroups, ...new Array<string>(fill).fill('0'), ...tailGroups].map((g) => parseInt(g, 16));
  return groups.length === 8 ? groups : null;
}

/** True for any address a public JWKS endpoint cannot have (IPv4 or IPv6, including IPv4 embedded in IPv6). */
export function isNonPublicAddress(address: string): boolean {
  const unbracketed = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(unbracketed);
  if (family === 4) return NON_PUBLIC.check(unbracketed, 'ipv4');
  if (family !== 6) return true; // not an address at all: refuse
  if (NON_PUBLIC.check(unbracketed, 'ipv6')) return true;
  const v4 = embeddedIpv4(unbracketed);
  return v4 !== null && NON_PUBLIC.check(v4, 'ipv4');
}

export type JwksUriRefusal = 'not_https' | 'non_public' | 'invalid';

/** Resolves every address of `hostname` (an IP literal resolves to itself). */
function resolveAll(hostname: string): Promise<LookupAddress[]> {
  const bare = hostname.replace(/^\[|\]$/g, '');
  if (isIP(bare)) return Promise.resolve([{ address: bare, family: isIP(bare) }]);
  return new Promise((resolve, reject) => dnsLookup(bare, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))));
}

/**
 * Why `uri` may not be stored, or null. A host that does not resolve now is accepted (it may
 * be published later); the fetch-time check guards it then.
 */
export async function jwksUriRefusal(uri: string, allowPrivate: boolean): Promise<JwksUriRefusal | null> {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'invalid';
  }
  if (allowPrivate) return url.protocol === 'https:' || url.protocol === 'http:' ? null : 'not_https';
  if (url.protocol !== 'https:') return 'not_https';
  if (url.username || url.password) return 'invalid';
  let addresses: LookupAddress[];
  try {
    addresses = await resolveAll(url.hostname);
  } catch {
    return null;
  }
  return addresses.length === 0 || addresses.some((a) => isNonPublicAddress(a.address)) ? 'non_public' : null;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for sockets that only ever yields public addresses (all of the host's, or none). */
export function publicOnlyLookup(hostname: string, options: { all?: boolean; family?: number | string }, callback: LookupCallback): void {
  resolveAll(hostname).then(
    (addresses) => {
      if (addresses.length === 0 || addresses.some((a) => isNonPublicAddress(a.address))) {
        const err: NodeJS.ErrnoException = new Error(`${hostname} resolves to a non-public address`);
        err.code = 'ENOTPUBLIC';
        callback(err, '');
        return;
      }
      if (options.all) callback(null, addresses);
      else callback(null, addresses[0].address, addresses[0].family);
    },
    (err: NodeJS.ErrnoException) => callback(err, ''),
  );
}

const MAX_JWKS_BYTES = 512 * 1024;

/**
 * jose's fetch for remote key sets under the policy: https only, public addresses only
 * (checked on the connection's own lookup), no redirects followed, at most 512 KB.
 */
export const publicHttpsFetch: FetchImplementation = (url, options) =>
  new Promise<Response>((resolve, reject) => {
    const target = new URL(url);
    if (target.protocol !== 'https:') {
      reject(new TypeError('jwksUri must use https'));
      return;
    }
    // Sockets skip `lookup` for an IP literal: check it here.
    const literal = target.hostname.replace(/^\[|\]$/g, '');
    if (isIP(literal) && isNonPublicAddress(literal)) {
      reject(new TypeError('jwksUri points at a non-public address'));
      return;
    }
    const req = httpsRequest(
      target,
      { method: options.method, headers: Object.fromEntries(options.headers), signal: options.signal, lookup: publicOnlyLookup as never },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_JWKS_BYTES) req.destroy(new TypeError('JWKS response too large'));
          else chunks.push(chunk);
        });
        res.on('end', () => {
          const headers = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            if (typeof value === 'string') headers.set(name, value);
          }
          resolve(new Response(Buffer.concat(chunks), { status: res.statusCode ?? 500, headers }));
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });

/** The jose option that applies the policy (none when JWKS_ALLOW_PRIVATE=true). */
export function jwksFetchOptions(allowPrivate: boolean): { [customFetch]?: FetchImplementation } {
  return allowPrivate ? {} : { [customFetch]: publicHttpsFetch };
}
