import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, EXAMPLE_SECRET_VALUES, loadConfig, weakSecretReason } from '#platform';

const STRONG = 'q7Xv2Lk9PzR4mWn8Tb3Hc6Jd1Fg5Ys0Ue+Ai/Oo=Kt';
const STRONG_OTHER = 'Zr8Ny3Wq6Em1Tu4Io7Pa0Sd2Fg5Hj9Kl+Xc/Vb=Mn';
const production = {
  NODE_ENV: 'production',
  DATABASE_URL: 'postgres://db/x',
  OPERATOR_TOKEN: STRONG,
  WEBHOOK_SIGNING_KEY: STRONG_OTHER,
  PUBLIC_BASE_URL: 'https://api.example.com',
};

function refusal(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).not.toContain('\n');
    return (err as Error).message;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

function envExampleValues(): Record<string, string> {
  const text = readFileSync(path.join(__dirname, '..', '..', '.env.example'), 'utf8');
  const values: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = /^([A-Z_]+)=(.*)$/.exec(line.trim());
    if (match) values[match[1]] = match[2];
  }
  return values;
}

describe('secret strength', () => {
  describe.each([
    ['change-me', 'placeholder "change-me"'],
    ['change-me-to-a-long-secret-value-0123456789', 'placeholder "change-me"'],
    ['CHANGEME-aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3', 'placeholder "changeme"'],
    ['my-Super-Secret-operator-token-9f8e7d6c5b4a', 'placeholder "secret"'],
    ['Password-1234567890-abcdefghijklmnopqrstuv', 'placeholder "password"'],
    ['example-aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM', 'placeholder "example"'],
    ['placeholder-qwe-rty-uio-pas-dfg-hjk-lzx-cvb', 'placeholder "placeholder"'],
    ['test-signing-key-0123456789abcdef0123456789', 'placeholder "test"'],
    ['Demo-aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5oQ', 'placeholder "demo"'],
    ['xxx-aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5oQ7', 'placeholder "xxx"'],
    ['TODO-aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5oQ', 'placeholder "todo"'],
    ['replace-with-openssl-rand-hex-24', 'example value'],
    ['replace-with-openssl-rand-hex-32', 'example value'],
    ['aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1g', 'shorter than 32'],
    ['op_test_token_0123456789abcdef', 'placeholder "test"'],
    ['k'.repeat(32), 'fewer than 10 distinct'],
    ['abababababababababababababababab12', 'fewer than 10 distinct'],
    ['a1b2c3d4e5'.repeat(4), 'repeats a shorter pattern'],
    ['aB3dE5gH7jK9'.repeat(3), 'repeats a shorter pattern'],
  ])('refuses %j', (value, reason) => {
    it(`as OPERATOR_TOKEN and WEBHOOK_SIGNING_KEY in production (${reason})`, () => {
      expect(weakSecretReason(value)).toContain(reason);
      expect(refusal({ ...production, OPERATOR_TOKEN: value })).toMatch(/^OPERATOR_TOKEN is refused when NODE_ENV=production: .*openssl rand -base64 48$/);
      expect(refusal({ ...production, WEBHOOK_SIGNING_KEY: value })).toMatch(/^WEBHOOK_SIGNING_KEY is refused when NODE_ENV=production: /);
    });
  });

  it.each([
    STRONG,
    'Zr8Ny3Wq6Em1Tu4Io7Pa0Sd2Fg5Hj9Kl+Xc/Vb=Mn',
    // openssl rand -hex 24 and -base64 48 shapes
    '3f9a1c7e5b2d8046a9e1f3c5b7d9024687ace13579bdf024',
    'u1XOCRaVdqSzb7Fn3PxL9yGm5tHw8JkQe2N4vZpA6cYr0sTi+/MoWgEhDjKlUfBI',
    // three letters of a placeholder inside a generated value are chance, not a placeholder
    'k9XXXm2Pq7Rt4Wv8Yz1Bc5Df3Gh6Jk0LnMp',
  ])('accepts %j', (value) => {
    expect(weakSecretReason(value)).toBeNull();
    expect(loadConfig({ ...production, OPERATOR_TOKEN: value, WEBHOOK_SIGNING_KEY: value }).operatorToken).toBe(value);
  });

  it('only in production: development keeps its defaults and short values', () => {
    expect(loadConfig({ OPERATOR_TOKEN: 'op_test_token_0123456789abcdef', WEBHOOK_SIGNING_KEY: 'k'.repeat(32) }).operatorToken).toBe(
      'op_test_token_0123456789abcdef',
    );
    expect(loadConfig({}).operatorToken).toBeUndefined();
  });

  it('refuses an example or placeholder password inside DATABASE_URL and REDIS_URL in production', () => {
    expect(refusal({ ...production, DATABASE_URL: 'postgres://app:replace-with-openssl-rand-hex-24@db/x' })).toMatch(
      /^DATABASE_URL is refused when NODE_ENV=production/,
    );
    expect(refusal({ ...production, DATABASE_URL: 'postgres://app:changeme@db/x' })).toMatch(/^DATABASE_URL /);
    expect(refusal({ ...production, REDIS_URL: 'redis://:password@cache:6379' })).toMatch(/^REDIS_URL /);
    expect(loadConfig({ ...production, DATABASE_URL: 'postgres://app:3f9a1c7e5b2d8046a9e1@db/x' }).databaseUrl).toContain('3f9a');
  });

  it('.env.example cannot start production: every value it ships is refused', () => {
    const example = envExampleValues();
    const secretValues = [example.OPERATOR_TOKEN, example.WEBHOOK_SIGNING_KEY, example.POSTGRES_PASSWORD];
    for (const value of secretValues) expect(EXAMPLE_SECRET_VALUES).toContain(value);
    expect(example.NODE_ENV).toBe('production');
    const env = {
      ...example,
      DATABASE_URL: `postgres://entitlements:${example.POSTGRES_PASSWORD}@postgres:5432/entitlements`,
      PUBLIC_BASE_URL: 'https://api.example.com',
    };
    expect(refusal(env)).toMatch(/^OPERATOR_TOKEN is refused when NODE_ENV=production: it is the example value of \.env\.example/);
    expect(refusal({ ...env, OPERATOR_TOKEN: STRONG })).toMatch(/^WEBHOOK_SIGNING_KEY is refused/);
    expect(refusal({ ...env, OPERATOR_TOKEN: STRONG, WEBHOOK_SIGNING_KEY: STRONG_OTHER })).toMatch(/^DATABASE_URL is refused/);
  });
});
