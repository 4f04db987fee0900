import { isNonPublicAddress, jwksUriRefusal } from '../../libs/identity/src/tokens/jwks-uri-policy.js';

describe('jwksUri policy', () => {
  it('non-public IPv4 and IPv6 addresses, including IPv4 carried in IPv6', () => {
    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '172.31.255.255',
      '192.168.0.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '::1',
      '::',
      'fe80::1',
      'fe80::1%eth0',
      'fd12:3456::1',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:0a00:0001',
      '64:ff9b::c0a8:101',
      '2002:7f00:1::',
      '[::1]',
      'not-an-address',
    ]) {
      expect({ address, refused: isNonPublicAddress(address) }).toEqual({ address, refused: true });
    }
  });

  it('public addresses pass', () => {
    for (const address of ['93.184.215.14', '8.8.8.8', '172.32.0.1', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::']) {
      expect({ address, refused: isNonPublicAddress(address) }).toEqual({ address, refused: false });
    }
  });

  it('jwksUriRefusal: scheme, credentials and resolved addresses; the development setting allows http and private', async () => {
    expect(await jwksUriRefusal('http://93.184.215.14/jwks', false)).toBe('not_https');
    expect(await jwksUriRefusal('https://user:pw@93.184.215.14/jwks', false)).toBe('invalid');
    expect(await jwksUriRefusal('https://localhost/jwks', false)).toBe('non_public');
    expect(await jwksUriRefusal('https://[::1]/jwks', false)).toBe('non_public');
    expect(await jwksUriRefusal('https://93.184.215.14/jwks', false)).toBeNull();
    expect(await jwksUriRefusal('http://127.0.0.1:8080/jwks', true)).toBeNull();
    expect(await jwksUriRefusal('ftp://127.0.0.1/jwks', true)).toBe('not_https');
  });
});
