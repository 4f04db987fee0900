import { csvCell, csvLine, decodeCursor, encodeCursor, likeLiteral, parseListFilter } from '../../libs/telemetry/src/console/customer-list-rules.js';

describe('customer list rules', () => {
  it('quotes CSV cells per RFC 4180 and defuses formula starts', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell(null)).toBe('');
    expect(csvCell(12)).toBe('12');
    expect(csvCell(-12)).toBe('-12');
    expect(csvCell(false)).toBe('false');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    for (const start of ['=', '+', '-', '@', '\t', '\r']) expect(csvCell(`${start}x`).replace(/^"/, '')).toMatch(/^'/);
    expect(csvCell('=SUM(A1,B1)')).toBe(`"'=SUM(A1,B1)"`);
    expect(csvLine(['a', null, 'b'])).toBe('a,,b\r\n');
  });

  it('round-trips the cursor and refuses anything else', () => {
    const cursor = { key: '1767225600000000', id: 'cdcust_abc' };
    expect(decodeCursor(encodeCursor(cursor))).toEqual(cursor);
    expect(decodeCursor(undefined)).toBeNull();
    for (const bad of ['x', Buffer.from('["1; DROP", "a"]').toString('base64url'), Buffer.from('{}').toString('base64url')]) {
      expect(() => decodeCursor(bad)).toThrow(/cursor/);
    }
  });

  it('escapes LIKE wildcards', () => {
    expect(likeLiteral('cdcust_a%b\\')).toBe('cdcust\\_a\\%b\\\\');
  });

  it('parses the filter with defaults and lower-cases the search', () => {
    expect(parseListFilter({ q: '  Jane@Example.COM ' })).toEqual({
      q: 'jane@example.com',
      state: null,
      rail: null,
      product: null,
      paying: null,
      sort: 'created',
      order: 'desc',
    });
    expect(parseListFilter({ state: 'billing_issue', paying: 'false', sort: 'mrr', order: 'asc', rail: 'ios_store', product: 'p' })).toMatchObject({
      state: 'billing_issue',
      paying: false,
      sort: 'mrr',
      order: 'asc',
      rail: 'ios_store',
      product: 'p',
    });
    expect(() => parseListFilter({ state: 'canceled' })).toThrow(/state/);
    expect(() => parseListFilter({ q: ['a', 'b'] })).toThrow(/q/);
  });
});
