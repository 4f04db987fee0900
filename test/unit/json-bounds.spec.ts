import { ApiError, DEFAULT_JSON_BOUNDS, assertJsonBounds, findJsonBoundsViolation } from '#platform';

const nested = (depth: number, inner = '1') => JSON.parse(`${'['.repeat(depth - 1)}[${inner}]${']'.repeat(depth - 1)}`);

describe('json-bounds: depth and key-count bounds of a parsed JSON body', () => {
  it('scalars and shallow bodies pass', () => {
    for (const value of [null, 1, 'x', true, {}, [], { a: { b: [1, 2, { c: null }] } }]) {
      expect(findJsonBoundsViolation(value)).toBeNull();
    }
  });

  it('depth counts objects and arrays, the root being level 1', () => {
    const bounds = { maxDepth: 3, maxKeys: 100 };
    expect(findJsonBoundsViolation({ a: { b: {} } }, bounds)).toBeNull();
    expect(findJsonBoundsViolation({ a: { b: { c: 1 } } }, bounds)).toBeNull();
    expect(findJsonBoundsViolation({ a: { b: { c: {} } } }, bounds)).toEqual({ bound: 'depth', limit: 3 });
    expect(findJsonBoundsViolation({ a: [[1]] }, bounds)).toBeNull();
    expect(findJsonBoundsViolation({ a: [[[]]] }, bounds)).toEqual({ bound: 'depth', limit: 3 });
    expect(findJsonBoundsViolation(nested(3), bounds)).toBeNull();
    expect(findJsonBoundsViolation(nested(4), bounds)).toEqual({ bound: 'depth', limit: 3 });
  });

  it('a depth far beyond any call stack is found without recursion', () => {
    const deep = JSON.parse(`{"x":${'[{"k":'.repeat(100_000)}1${'}]'.repeat(100_000)}}`);
    expect(findJsonBoundsViolation(deep)).toEqual({ bound: 'depth', limit: DEFAULT_JSON_BOUNDS.maxDepth });
    expect(findJsonBoundsViolation(deep, { maxDepth: 1_000_000, maxKeys: 1_000_000 })).toBeNull();
  });

  it('keys are counted over the whole body; array elements are not keys', () => {
    const bounds = { maxDepth: 10, maxKeys: 5 };
    expect(findJsonBoundsViolation({ a: 1, b: { c: 1, d: 2 } }, { maxDepth: 10, maxKeys: 4 })).toBeNull();
    expect(findJsonBoundsViolation({ a: 1, b: { c: 1, d: 2 }, e: [] }, bounds)).toBeNull();
    expect(findJsonBoundsViolation({ a: 1, b: { c: 1, d: 2 }, e: [{ f: 1 }] }, bounds)).toEqual({ bound: 'keys', limit: 5 });
    expect(findJsonBoundsViolation({ list: new Array(10_000).fill(0) }, bounds)).toBeNull();
    const wide = Object.fromEntries(Array.from({ length: DEFAULT_JSON_BOUNDS.maxKeys + 1 }, (_, i) => [`k${i}`, i]));
    expect(findJsonBoundsViolation(wide)).toEqual({ bound: 'keys', limit: DEFAULT_JSON_BOUNDS.maxKeys });
  });

  it('keys reached only through the prototype are not counted', () => {
    const child = Object.create({ inherited: { deep: { deeper: {} } } });
    child.own = 1;
    expect(findJsonBoundsViolation(child, { maxDepth: 1, maxKeys: 1 })).toBeNull();
  });

  it('assertJsonBounds throws 400 invalid_param_value naming the bound', () => {
    expect(() => assertJsonBounds({ a: 1 })).not.toThrow();
    const depth = (() => {
      try {
        assertJsonBounds(nested(40));
      } catch (error) {
        return error;
      }
    })() as ApiError;
    expect(depth).toBeInstanceOf(ApiError);
    expect(depth.status).toBe(400);
    expect(depth.code).toBe('invalid_param_value');
    expect(depth.message).toBe('Request body is nested too deeply: at most 32 levels of objects and arrays');
    expect(() => assertJsonBounds({ a: 1, b: 2 }, { maxDepth: 5, maxKeys: 1 })).toThrow('Request body has too many keys: at most 1 object keys in total');
  });
});
