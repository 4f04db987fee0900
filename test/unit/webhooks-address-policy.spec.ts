import { checkEndpointUrl, isPublicAddress } from '#webhooks';

/** Forms that reach a non-public IPv4 host, or an IPv6 special-purpose range: refused in production. */
const REFUSED: [string, string][] = [
  // IPv4
  ['127.0.0.1', 'loopback'],
  ['10.1.2.3', 'private'],
  ['172.16.0.1', 'private'],
  ['192.168.1.1', 'private'],
  ['169.254.169.254', 'link-local (cloud metadata)'],
  ['100.64.0.1', 'carrier-grade NAT'],
  ['0.0.0.0', 'unspecified'],
  ['255.255.255.255', 'broadcast'],
  ['224.0.0.1', 'multicast'],
  ['240.0.0.1', 'reserved'],
  ['192.0.0.8', 'IETF protocol assignments'],
  ['192.0.2.1', 'documentation'],
  ['198.51.100.1', 'documentation'],
  ['203.0.113.1', 'documentation'],
  ['198.18.0.1', 'benchmarking'],
  ['192.88.99.1', '6to4 relay anycast'],
  // IPv6 special-purpose ranges
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['0:0:0:0:0:0:0:1', 'loopback, uncompressed'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local with a zone'],
  ['febf:ffff::1', 'link-local, top of the range'],
  ['fc00::1', 'unique-local'],
  ['fd12:3456:789a::1', 'unique-local'],
  ['fec0::1', 'site-local (deprecated)'],
  ['ff02::1', 'multicast'],
  ['ff05::2', 'multicast'],
  ['100::1', 'discard-only'],
  ['100::ffff:ffff:ffff:ffff', 'discard-only, top of the range'],
  ['100:0:0:1::1', 'dummy prefix'],
  ['2001:db8::1', 'documentation'],
  ['2001:db8:ffff::1', 'documentation'],
  ['3fff::1', 'documentation (RFC 9637)'],
  ['2001:2::1', 'benchmarking'],
  ['2001:3::1', 'AMT'],
  ['2001:4:112::1', 'AS112'],
  ['2620:4f:8000::1', 'AS112'],
  ['2001:10::1', 'ORCHID (deprecated)'],
  ['2001:20::1', 'ORCHIDv2'],
  ['2001:30::1', 'drone remote ID'],
  ['2001:1::1', 'port control anycast'],
  ['2001:100::1', 'IETF protocol assignments'],
  ['5f00::1', 'segment routing'],
  ['4000::1', 'outside global unicast'],
  ['64:ff9b:1::a00:1', 'NAT64 local-use'],
  ['64:ff9b:1::808:808', 'NAT64 local-use, even around a public IPv4'],
  // IPv4-mapped
  ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
  ['::ffff:7f00:1', 'IPv4-mapped loopback, hex'],
  ['0:0:0:0:0:ffff:7f00:1', 'IPv4-mapped loopback, uncompressed'],
  ['::ffff:10.0.0.1', 'IPv4-mapped private'],
  ['::ffff:169.254.169.254', 'IPv4-mapped link-local'],
  ['::ffff:0.0.0.0', 'IPv4-mapped unspecified'],
  ['::FFFF:192.168.0.1', 'IPv4-mapped private, upper case'],
  // IPv4-compatible
  ['::127.0.0.1', 'IPv4-compatible loopback'],
  ['::7f00:1', 'IPv4-compatible loopback, hex'],
  ['::10.0.0.1', 'IPv4-compatible private'],
  ['::a9fe:a9fe', 'IPv4-compatible link-local'],
  ['::0.0.0.2', 'IPv4-compatible unspecified network'],
  // SIIT (IPv4-translated)
  ['::ffff:0:7f00:1', 'SIIT loopback'],
  ['::ffff:0:127.0.0.1', 'SIIT loopback, dotted'],
  ['::ffff:0:a00:1', 'SIIT private'],
  // NAT64 well-known prefix
  ['64:ff9b::7f00:1', 'NAT64 loopback'],
  ['64:ff9b::127.0.0.1', 'NAT64 loopback, dotted'],
  ['64:ff9b::c0a8:101', 'NAT64 private'],
  ['64:ff9b::a9fe:a9fe', 'NAT64 link-local'],
  // 6to4
  ['2002:7f00:1::', '6to4 loopback'],
  ['2002:7f00:1::1', '6to4 loopback, a host'],
  ['2002:a00:1::1', '6to4 private'],
  ['2002:c0a8:101::1', '6to4 private'],
  ['2002:a9fe:a9fe::1', '6to4 link-local'],
  ['2002::1', '6to4 unspecified'],
  // Teredo: server, then client (inverted)
  ['2001:0:7f00:1::1', 'Teredo server loopback'],
  ['2001::7f00:1:0:0:0:1', 'Teredo server loopback, other spelling'],
  ['2001:0:a00:1::1', 'Teredo server private'],
  ['2001:0:808:808:0:0:80ff:fffe', 'Teredo client loopback (obfuscated 127.0.0.1)'],
  ['2001:0:808:808:8000:ffff:f5ff:fffe', 'Teredo client private (obfuscated 10.0.0.1)'],
  ['2001::', 'Teredo with zero addresses'],
  // ISATAP interface identifiers
  ['2606:4700::5efe:7f00:1', 'ISATAP loopback'],
  ['2606:4700::200:5efe:a00:1', 'ISATAP private'],
  // Not an address
  ['localhost', 'a name'],
  ['', 'empty'],
  ['::ffff:127.0.0.1.1', 'malformed'],
  ['1.2.3', 'short IPv4'],
  ['0x7f.0.0.1', 'hex IPv4'],
  ['[::1]', 'bracketed'],
];

const ACCEPTED: [string, string][] = [
  ['93.184.216.34', 'public IPv4'],
  ['8.8.8.8', 'public IPv4'],
  ['1.1.1.1', 'public IPv4'],
  ['2606:4700:4700::1111', 'public IPv6'],
  ['2a00:1450:4001:82a::200e', 'public IPv6'],
  ['2001:4860:4860::8888', 'public IPv6 (outside 2001::/23)'],
  ['2404:6800:4003:c00::64', 'public IPv6'],
  ['::ffff:8.8.8.8', 'IPv4-mapped public'],
  ['::ffff:808:808', 'IPv4-mapped public, hex'],
  ['::8.8.8.8', 'IPv4-compatible public'],
  ['::ffff:0:808:808', 'SIIT public'],
  ['64:ff9b::808:808', 'NAT64 public'],
  ['64:ff9b::93.184.216.34', 'NAT64 public, dotted'],
  ['2002:808:808::1', '6to4 public'],
  ['2001:0:808:808:0:0:f7f7:f7f7', 'Teredo public server and client (8.8.8.8 twice)'],
  ['2606:4700::5efe:808:808', 'ISATAP public'],
];

describe('webhook endpoint addresses (parsed)', () => {
  it.each(REFUSED)('%s (%s) is not public', (address) => expect(isPublicAddress(address)).toBe(false));
  it.each(ACCEPTED)('%s (%s) is public', (address) => expect(isPublicAddress(address)).toBe(true));

  it('a URL with a non-public IPv6 literal is refused in production, whatever its spelling', () => {
    const refused = [
      '[::127.0.0.1]',
      '[::ffff:0:7f00:1]',
      '[::ffff:127.0.0.1]',
      '[2002:7f00:1::]',
      '[2001:0:7f00:1::1]',
      '[64:ff9b::7f00:1]',
      '[64:ff9b:1::1]',
      '[100::1]',
    ];
    for (const host of refused) {
      expect({ host, verdict: checkEndpointUrl(`https://${host}/hook`, false) }).toEqual({
        host,
        verdict: { ok: false, reason: 'url must resolve to public addresses only' },
      });
    }
    expect(checkEndpointUrl('https://[2606:4700:4700::1111]/hook', false).ok).toBe(true);
    expect(checkEndpointUrl('https://[::ffff:8.8.8.8]/hook', false).ok).toBe(true);
  });
});
