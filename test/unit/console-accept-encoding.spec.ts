import { chooseEncoding } from '../../libs/console/src/static/accept-encoding.js';

describe('console assets: choosing a precompressed variant by Accept-Encoding', () => {
  const both = ['br', 'gzip'] as const;

  it('prefers brotli, then gzip, among what the browser accepts', () => {
    expect(chooseEncoding('gzip, deflate, br, zstd', both)).toBe('br');
    expect(chooseEncoding('gzip, deflate', both)).toBe('gzip');
    expect(chooseEncoding('x-gzip', both)).toBe('gzip');
    expect(chooseEncoding('GZIP', both)).toBe('gzip');
    expect(chooseEncoding('br', ['gzip'])).toBeUndefined();
  });

  it('answers the file as it is without the header, for identity, or with nothing on disk', () => {
    expect(chooseEncoding(undefined, both)).toBeUndefined();
    expect(chooseEncoding('', both)).toBeUndefined();
    expect(chooseEncoding('identity', both)).toBeUndefined();
    expect(chooseEncoding('gzip, br', [])).toBeUndefined();
  });

  it('follows q-values: a higher q wins, q=0 refuses, * stands for the encodings not named', () => {
    expect(chooseEncoding('br;q=0.5, gzip;q=0.9', both)).toBe('gzip');
    expect(chooseEncoding('br;q=0, gzip', both)).toBe('gzip');
    expect(chooseEncoding('br;q=0, gzip;q=0', both)).toBeUndefined();
    expect(chooseEncoding('*', both)).toBe('br');
    expect(chooseEncoding('*;q=0.1, gzip;q=0.5', both)).toBe('gzip');
    expect(chooseEncoding('*;q=0', both)).toBeUndefined();
    expect(chooseEncoding('br;q=nonsense, gzip', both)).toBe('gzip');
  });
});
