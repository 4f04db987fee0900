import { ApiError, operatorEnv, queryInt, queryString } from '#platform';

describe('operator query parameters', () => {
  const code = (fn: () => unknown) => {
    try {
      fn();
      return null;
    } catch (err) {
      return err instanceof ApiError ? `${err.status} ${err.code} ${err.message}` : String(err);
    }
  };

  it('env defaults to production and accepts only sandbox or production', () => {
    expect(operatorEnv(undefined)).toBe('production');
    expect(operatorEnv('')).toBe('production');
    expect(operatorEnv('sandbox')).toBe('sandbox');
    expect(code(() => operatorEnv('staging'))).toMatch(/^400 invalid_param_value env/);
    expect(code(() => operatorEnv(['sandbox']))).toMatch(/^400 invalid_param_value env/);
  });

  it('integers stay within their bounds and name the parameter', () => {
    expect(queryInt(undefined, 'limit', 1, 100, 25)).toBe(25);
    expect(queryInt('1', 'limit', 1, 100, 25)).toBe(1);
    expect(queryInt('100', 'limit', 1, 100, 25)).toBe(100);
    for (const bad of ['0', '101', '-1', '1.5', 'abc', '1e2', ' 5', ['5']])
      expect(code(() => queryInt(bad, 'limit', 1, 100, 25))).toMatch(/^400 invalid_param_value limit/);
  });

  it('strings are bounded and never repeated', () => {
    expect(queryString(undefined, 'before', 8)).toBeUndefined();
    expect(queryString('abc', 'before', 8)).toBe('abc');
    expect(code(() => queryString('x'.repeat(9), 'before', 8))).toMatch(/^400 invalid_param_value before/);
    expect(code(() => queryString(['a', 'b'], 'before', 8))).toMatch(/^400 invalid_param_value before/);
  });
});
