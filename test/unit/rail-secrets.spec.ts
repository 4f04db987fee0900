import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '#platform';
import { parseRailSecrets, RailSecrets, RailSecretsError } from '#rails';

const KEY = '-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n';
const account = { type: 'service_account', client_email: 'a@b.iam.gserviceaccount.com', private_key: KEY, token_uri: 'https://oauth2.googleapis.com/token' };
const valid = {
  projects: {
    proj_a: {
      card_payments: { webhookSecrets: ['whsec_new', 'whsec_old'] },
      android_store: { pushToken: 'a-long-random-push-token', serviceAccount: { ...account, project_id: 'x' } },
      ios_store: { issuerId: 'i', keyId: 'k', privateKey: KEY },
    },
    proj_b: {},
  },
};

function error(value: unknown): string {
  try {
    parseRailSecrets(typeof value === 'string' ? value : JSON.stringify(value));
  } catch (err) {
    expect(err).toBeInstanceOf(RailSecretsError);
    return (err as Error).message;
  }
  throw new Error('expected a RailSecretsError');
}

describe('parseRailSecrets', () => {
  it('reads the documented structure, keeping extra service-account fields', () => {
    const parsed = parseRailSecrets(JSON.stringify(valid));
    expect(parsed.projects.proj_a.card_payments).toEqual({ webhookSecrets: ['whsec_new', 'whsec_old'] });
    expect(parsed.projects.proj_a.android_store?.serviceAccount).toEqual({ ...account, project_id: 'x' });
    expect(parsed.projects.proj_a.ios_store).toEqual({ issuerId: 'i', keyId: 'k', privateKey: KEY });
    expect(parsed.projects.proj_b).toEqual({});
  });

  it('reads the card API key (with or without webhook secrets); never echoes a bad one', () => {
    const both = parseRailSecrets(JSON.stringify({ projects: { p: { card_payments: { webhookSecrets: ['whsec_a'], apiKey: 'rk_live_x' } } } }));
    expect(both.projects.p.card_payments).toEqual({ webhookSecrets: ['whsec_a'], apiKey: 'rk_live_x' });
    const readOnly = parseRailSecrets(JSON.stringify({ projects: { p: { card_payments: { apiKey: 'rk_live_x' } } } }));
    expect(readOnly.projects.p.card_payments).toEqual({ webhookSecrets: [], apiKey: 'rk_live_x' });
    expect(error({ projects: { p: { card_payments: { apiKey: '' } } } })).toMatch(/card_payments\.apiKey must be a non-empty string/);
    expect(error({ projects: { p: { ios_store: { issuerId: 'i', keyId: 'k', privateKey: 'sk_secret_value' } } } })).toBe(
      'projects.p.ios_store.privateKey must be a PEM private key',
    );
  });

  it.each([
    ['not JSON', 'whsec_secret{', /is not valid JSON/],
    ['no projects', {}, /^projects must be an object/],
    ['empty secrets', { projects: { p: { card_payments: { webhookSecrets: [] } } } }, /projects\.p\.card_payments\.webhookSecrets must be a non-empty array/],
    ['non-string secret', { projects: { p: { card_payments: { webhookSecrets: ['whsec_ok', 7] } } } }, /webhookSecrets\[1\] must be a non-empty string/],
    ['short push token', { projects: { p: { android_store: { pushToken: 'short', serviceAccount: account } } } }, /pushToken must be at least 16/],
    ['no service account', { projects: { p: { android_store: { pushToken: 'a-long-random-push-token' } } } }, /serviceAccount must be an object/],
    [
      'bad token_uri',
      { projects: { p: { android_store: { pushToken: 'a-long-random-push-token', serviceAccount: { ...account, token_uri: 'ftp://x' } } } } },
      /token_uri must be an http\(s\) URL/,
    ],
    [
      'not a PEM key',
      { projects: { p: { android_store: { pushToken: 'a-long-random-push-token', serviceAccount: { ...account, private_key: 'whsec_secret' } } } } },
      /private_key must be a PEM private key/,
    ],
  ])('%s: names the field, never the value', (_label, value, pattern) => {
    const message = error(value);
    expect(message).toMatch(pattern);
    expect(message).not.toContain('whsec_');
    expect(message).not.toContain('short');
  });
});

describe('RailSecrets', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'rail-secrets-spec-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const logger = () => {
    const lines: { level: string; msg: string; obj: unknown }[] = [];
    const log = (level: string) => (obj: unknown, msg: string) => lines.push({ level, msg, obj });
    return { lines, logger: { info: log('info'), error: log('error'), warn: log('warn') } as never };
  };

  it('at start, a malformed file stops the process with one line (ConfigError) naming the field', () => {
    const file = path.join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ projects: { p: { card_payments: { webhookSecrets: 'whsec_plain' } } } }));
    // The config check only asks for JSON; the structure is RailSecrets's.
    const config = loadConfig({ RAIL_SECRETS_FILE: file });
    const secrets = new RailSecrets(config, logger().logger);
    expect(() => secrets.onModuleInit()).toThrow(ConfigError);
    try {
      secrets.onModuleInit();
    } catch (err) {
      expect((err as Error).message).toMatch(/^RAIL_SECRETS_FILE \(.*\) projects\.p\.card_payments\.webhookSecrets must be a non-empty array of strings$/);
      expect((err as Error).message).not.toContain('whsec_plain');
    }
  });

  it('re-reads a changed file; a malformed one is logged once and the last good content stays', () => {
    const file = path.join(dir, 'ok.json');
    writeFileSync(file, JSON.stringify(valid));
    const { lines, logger: log } = logger();
    const secrets = new RailSecrets(loadConfig({ RAIL_SECRETS_FILE: file }), log);
    secrets.onModuleInit();
    try {
      expect(secrets.cardPayments('proj_a')?.webhookSecrets).toEqual(['whsec_new', 'whsec_old']);
      expect(secrets.isConfigured('proj_a', 'android_store')).toBe(true);
      expect(secrets.isConfigured('proj_b', 'card_payments')).toBe(false);
      expect(secrets.cardPayments('constructor')).toBeNull();

      writeFileSync(file, JSON.stringify({ projects: { proj_a: { card_payments: { webhookSecrets: ['whsec_rotated'] } } } }));
      secrets.reloadIfChanged();
      expect(secrets.cardPayments('proj_a')?.webhookSecrets).toEqual(['whsec_rotated']);
      expect(secrets.androidStore('proj_a')).toBeNull();

      writeFileSync(file, '{"projects": {"proj_a": {"card_payments": {"webhookSecrets": ["whsec_broken"');
      secrets.reloadIfChanged();
      secrets.reloadIfChanged();
      expect(secrets.cardPayments('proj_a')?.webhookSecrets).toEqual(['whsec_rotated']);
      const errors = lines.filter((line) => line.level === 'error');
      expect(errors).toHaveLength(1);
      expect(JSON.stringify(lines)).not.toContain('whsec_');
    } finally {
      secrets.onModuleDestroy();
    }
  });
});
