import { CONSOLE_SIGN_IN_FAILURES, OPERATOR_AUTH_FAILURES, failureSubject, fastifyTrustProxy, msUntilNextAttempt } from '#platform';

describe('failed attempts at the operator token', () => {
  it('the next attempt is possible once the bucket holds a whole token again, never sooner than a second', () => {
    expect(msUntilNextAttempt(0, OPERATOR_AUTH_FAILURES.rule)).toBe(6000);
    expect(msUntilNextAttempt(0.5, OPERATOR_AUTH_FAILURES.rule)).toBe(3000);
    expect(msUntilNextAttempt(0, CONSOLE_SIGN_IN_FAILURES.rule)).toBe(12_000);
    expect(msUntilNextAttempt(0.99, CONSOLE_SIGN_IN_FAILURES.rule)).toBe(1000);
  });

  it('buckets are per deployment (a digest of its token, never the token) and per address', () => {
    const a = failureSubject('op_first_token_0123456789', '203.0.113.7');
    expect(a).toMatch(/^[0-9a-f]{16}:203\.0\.113\.7$/);
    expect(a).not.toContain('op_first');
    expect(failureSubject('op_other_token_0123456789', '203.0.113.7')).not.toBe(a);
    expect(failureSubject('op_first_token_0123456789', '203.0.113.8')).not.toBe(a);
  });
});

describe('TRUST_PROXY as Fastify takes it', () => {
  it('passes false, true and address lists through; a hop count trusts that many proxies nearest the service', () => {
    expect(fastifyTrustProxy(false)).toBe(false);
    expect(fastifyTrustProxy(true)).toBe(true);
    expect(fastifyTrustProxy(['10.0.0.0/8'])).toEqual(['10.0.0.0/8']);
    const twoHops = fastifyTrustProxy(2) as (address: string, hop: number) => boolean;
    expect([0, 1, 2, 3].map((hop) => twoHops('10.0.0.1', hop))).toEqual([true, true, false, false]);
  });
});
