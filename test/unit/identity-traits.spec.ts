import { mergeTraits, sanitizeTraits } from '#identity';

describe('identity: trait sanitising', () => {
  it('keeps strings up to 1,024 chars, finite numbers, booleans and null', () => {
    expect(sanitizeTraits({ plan: 'pro', seats: 3, ratio: 0.5, beta: true, nickname: null, max: 'x'.repeat(1024) })).toEqual({
      plan: 'pro',
      seats: 3,
      ratio: 0.5,
      beta: true,
      nickname: null,
      max: 'x'.repeat(1024),
    });
  });

  it('drops nested objects, arrays, long strings and non-finite numbers without rejecting', () => {
    expect(
      sanitizeTraits({
        ok: 1,
        nested: { a: 1 },
        list: [1, 2],
        long: 'x'.repeat(1025),
        nan: Number.NaN,
        inf: Number.POSITIVE_INFINITY,
        undef: undefined,
        fn: () => 1,
      }),
    ).toEqual({ ok: 1 });
  });

  it('drops keys and strings PostgreSQL cannot store in jsonb (NUL, unpaired surrogates), keeps valid pairs', () => {
    expect(sanitizeTraits({ ok: 'fine', nul: 'a\u0000b', 'k\u0000': 'x', high: 'x\uD800', low: '\uDC00x', '\uD800': 1, emoji: 'ok \uD83D\uDE00' })).toEqual({
      ok: 'fine',
      emoji: 'ok \uD83D\uDE00',
    });
  });

  it('keeps at most 32 keys: the first 32 valid ones in the order sent', () => {
    const input: Record<string, unknown> = { skipped: { nested: true } };
    for (let i = 0; i < 40; i++) input[`k${i}`] = i;
    const out = sanitizeTraits(input);
    expect(Object.keys(out)).toHaveLength(32);
    expect(out.k0).toBe(0);
    expect(out.k31).toBe(31);
    expect(out.k32).toBeUndefined();
    expect(out.skipped).toBeUndefined();
  });

  it('drops empty, over-long and prototype keys', () => {
    const input = JSON.parse('{"__proto__": "x", "": 1, "constructor": 2, "fine": 3}');
    input['k'.repeat(129)] = 4;
    expect(sanitizeTraits(input)).toEqual({ fine: 3 });
    expect(Object.getPrototypeOf(sanitizeTraits(input))).toBe(Object.prototype);
  });

  it('gives {} for anything that is not a plain object', () => {
    for (const value of [null, undefined, 'x', 3, true, [1, 2], [{ a: 1 }]]) expect(sanitizeTraits(value)).toEqual({});
  });

  it('merges additively per key; later values win, null is stored', () => {
    expect(mergeTraits({ a: 1, b: 'x' }, { b: null, c: true })).toEqual({ a: 1, b: null, c: true });
  });

  it('never grows the stored map beyond 32 keys but still updates existing keys', () => {
    const stored: Record<string, number> = {};
    for (let i = 0; i < 31; i++) stored[`s${i}`] = i;
    const merged = mergeTraits(stored, { s0: 100, n1: 1, n2: 2 });
    expect(Object.keys(merged)).toHaveLength(32);
    expect(merged.s0).toBe(100);
    expect(merged.n1).toBe(1);
    expect(merged.n2).toBeUndefined();
  });
});
