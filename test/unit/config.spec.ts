import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '#platform';

const STRONG_OPERATOR_TOKEN = 'op_Vx7Qm2Rk9Ln4Tz8Wc1Yb5Hd3Jf6Gs0Pa';

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).not.toContain('\n');
    return err as ConfigError;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe('loadConfig', () => {
  it('applies the documented defaults (README "Configuration") to an empty environment', () => {
    expect(loadConfig({})).toEqual({
      nodeEnv: 'development',
      port: 3000,
      host: '0.0.0.0',
      databaseUrl: undefined,
      redisUrl: undefined,
      redisCommandTimeoutMs: 100,
      operatorToken: undefined,
      testClockEnabled: false,
      migrationsRun: true,
      logLevel: 'info',
      railSecretsFile: undefined,
      androidPublisherBaseUrl: 'https://androidpublisher.googleapis.com/',
      consoleDir: 'dist/console',
      cardPaymentsApiBaseUrl: 'https://api.stripe.com',
      appStoreServerApiBaseUrl: 'https://api.storekit.itunes.apple.com',
      appStoreServerApiSandboxBaseUrl: 'https://api.storekit-sandbox.itunes.apple.com',
      railReadTimeoutMs: 10_000,
      railExpiryReadsConcurrency: 32,
      backgroundJobs: true,
      serviceName: 'entitlements',
      region: 'local',
      sdkVersionEnforcement: false,
      dbPoolSize: 10,
      dbPreparedStatements: true,
      eventRollups: true,
      eventsWriteSlots: 4,
      keyCacheTtlMs: 5000,
      jwksAllowPrivate: false,
      httpHeadersTimeoutMs: 20_000,
      httpRequestTimeoutMs: 30_000,
      httpKeepAliveTimeoutMs: 65_000,
      dbStatementTimeoutMs: 5_000,
      dbPoolAcquireTimeoutMs: 2_000,
      shutdownDelayMs: 0,
      metricsPort: 9464,
      eventsBufferUrl: undefined,
      eventsBufferStream: 'EVENTS',
      eventsBufferReplicas: 1,
      sourcemapDecodeWorkers: 1,
      sourcemapUploadBytesInFlight: 104857600,
      sourcemapUploadConcurrency: 2,
      sourcemapUploadQueueMs: 10000,
      webhookSigningKey: undefined,
      webhooksAllowPrivate: false,
      docsEnabled: true,
      docsOperator: false,
      publicBaseUrl: 'http://localhost:3000',
      trustProxy: false,
    });
  });

  it('serves the docs by default outside production only; the operator part only when asked', () => {
    const production = { NODE_ENV: 'production', DATABASE_URL: 'postgres://u@db/x', WEBHOOK_SIGNING_KEY: 'Kq3vZ8xW1nL5tR9yB2mC6hJ0dF4gS7pA+uE/oI=N' };
    expect(loadConfig(production)).toEqual(expect.objectContaining({ docsEnabled: false, docsOperator: false }));
    expect(loadConfig({ ...production, DOCS_ENABLED: 'true' }).docsEnabled).toBe(true);
    expect(loadConfig({ DOCS_ENABLED: 'false', DOCS_OPERATOR: 'true' })).toEqual(expect.objectContaining({ docsEnabled: false, docsOperator: true }));
    expect(() => loadConfig({ DOCS_ENABLED: 'yes' })).toThrow(/^DOCS_ENABLED must be one of/);
    expect(() => loadConfig({ DOCS_OPERATOR: 'maybe' })).toThrow(/^DOCS_OPERATOR must be one of/);
  });

  it('reads the events buffer and refuses a URL that is not NATS or a stream name JetStream would refuse', () => {
    expect(loadConfig({ EVENTS_BUFFER_URL: 'nats://127.0.0.1:4222', EVENTS_BUFFER_STREAM: 'EVENTS_test-1', EVENTS_BUFFER_REPLICAS: '3' })).toEqual(
      expect.objectContaining({ eventsBufferUrl: 'nats://127.0.0.1:4222', eventsBufferStream: 'EVENTS_test-1', eventsBufferReplicas: 3 }),
    );
    expect(() => loadConfig({ EVENTS_BUFFER_URL: 'redis://127.0.0.1:6379' })).toThrow(/EVENTS_BUFFER_URL must use nats: or tls:/);
    expect(() => loadConfig({ EVENTS_BUFFER_STREAM: 'events.batches' })).toThrow(/EVENTS_BUFFER_STREAM must be 1 to 64/);
    expect(() => loadConfig({ EVENTS_BUFFER_REPLICAS: '7' })).toThrow(/EVENTS_BUFFER_REPLICAS/);
  });

  it('reads whether hot statements run prepared, refusing a value that is not a flag', () => {
    expect(loadConfig({ DB_PREPARED_STATEMENTS: 'false' })).toEqual(expect.objectContaining({ dbPreparedStatements: false }));
    expect(loadConfig({ DB_PREPARED_STATEMENTS: '1' })).toEqual(expect.objectContaining({ dbPreparedStatements: true }));
    expect(() => loadConfig({ DB_PREPARED_STATEMENTS: 'sometimes' })).toThrow(/^DB_PREPARED_STATEMENTS must be one of/);
    expect(loadConfig({ EVENT_ROLLUPS: 'false' })).toEqual(expect.objectContaining({ eventRollups: false }));
    expect(() => loadConfig({ EVENT_ROLLUPS: 'maybe' })).toThrow(/^EVENT_ROLLUPS must be one of/);
  });

  it('reads the event write slots, which leave at least one pooled connection to the rest of the API', () => {
    expect(loadConfig({ EVENTS_WRITE_SLOTS: '4' })).toEqual(expect.objectContaining({ eventsWriteSlots: 4 }));
    expect(loadConfig({ DB_POOL_SIZE: '3' })).toEqual(expect.objectContaining({ dbPoolSize: 3, eventsWriteSlots: 2 }));
    expect(loadConfig({ DB_POOL_SIZE: '2' })).toEqual(expect.objectContaining({ dbPoolSize: 2, eventsWriteSlots: 1 }));
    expect(loadConfig({ DB_POOL_SIZE: '1' })).toEqual(expect.objectContaining({ dbPoolSize: 1, eventsWriteSlots: 1 }));
    expect(() => loadConfig({ EVENTS_WRITE_SLOTS: '10' })).toThrow(/EVENTS_WRITE_SLOTS must leave at least one connection/);
    expect(() => loadConfig({ EVENTS_WRITE_SLOTS: '0' })).toThrow(/EVENTS_WRITE_SLOTS must be an integer/);
  });

  it('reads the edge timeouts and refuses a headers timeout above the request timeout', () => {
    const config = loadConfig({
      HTTP_HEADERS_TIMEOUT_MS: '1000',
      HTTP_REQUEST_TIMEOUT_MS: '2000',
      HTTP_KEEP_ALIVE_TIMEOUT_MS: '70000',
      DB_STATEMENT_TIMEOUT_MS: '250',
      DB_POOL_ACQUIRE_TIMEOUT_MS: '100',
      JWKS_ALLOW_PRIVATE: 'true',
    });
    expect(config).toEqual(
      expect.objectContaining({
        httpHeadersTimeoutMs: 1000,
        httpRequestTimeoutMs: 2000,
        httpKeepAliveTimeoutMs: 70_000,
        dbStatementTimeoutMs: 250,
        dbPoolAcquireTimeoutMs: 100,
        jwksAllowPrivate: true,
      }),
    );
    expect(() => loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '40000' })).toThrow('HTTP_HEADERS_TIMEOUT_MS must not exceed HTTP_REQUEST_TIMEOUT_MS');
    expect(() => loadConfig({ DB_STATEMENT_TIMEOUT_MS: 'soon' })).toThrow(/DB_STATEMENT_TIMEOUT_MS must be an integer/);
    expect(() => loadConfig({ JWKS_ALLOW_PRIVATE: 'true', NODE_ENV: 'production' })).toThrow('JWKS_ALLOW_PRIVATE=true is refused when NODE_ENV=production');
  });

  it('treats empty strings as unset', () => {
    const config = loadConfig({
      PORT: '',
      HOST: '',
      DATABASE_URL: '',
      REDIS_URL: '',
      OPERATOR_TOKEN: '',
      TEST_CLOCK: '',
      MIGRATIONS_RUN: '',
      LOG_LEVEL: '',
      SERVICE_NAME: '',
      REGION: '',
    });
    expect(config).toEqual(loadConfig({}));
  });

  it('reads every documented variable', () => {
    const config = loadConfig({
      NODE_ENV: 'production',
      WEBHOOK_SIGNING_KEY: 'Kq3vZ8xW1nL5tR9yB2mC6hJ0dF4gS7pA+uE/oI=N',
      PORT: '8080',
      HOST: '127.0.0.1',
      DATABASE_URL: 'postgres://app:pw0@db:5432/entitlements',
      REDIS_URL: 'redis://cache:6379',
      OPERATOR_TOKEN: 'op_Vx7Qm2Rk9Ln4Tz8Wc1Yb5Hd3Jf6Gs0Pa',
      PUBLIC_BASE_URL: 'https://billing.example.com',
      TRUST_PROXY: '1',
      MIGRATIONS_RUN: 'false',
      LOG_LEVEL: 'warn',
      SERVICE_NAME: 'billing',
      REGION: 'eu-west-1',
    });
    expect(config).toEqual(
      expect.objectContaining({
        nodeEnv: 'production',
        port: 8080,
        host: '127.0.0.1',
        databaseUrl: 'postgres://app:pw0@db:5432/entitlements',
        redisUrl: 'redis://cache:6379',
        operatorToken: 'op_Vx7Qm2Rk9Ln4Tz8Wc1Yb5Hd3Jf6Gs0Pa',
        publicBaseUrl: 'https://billing.example.com',
        trustProxy: 1,
        testClockEnabled: false,
        migrationsRun: false,
        logLevel: 'warn',
        serviceName: 'billing',
        region: 'eu-west-1',
      }),
    );
    expect(loadConfig({ DATABASE_URL: 'postgresql://db/x', REDIS_URL: 'rediss://cache:6380' })).toEqual(
      expect.objectContaining({ databaseUrl: 'postgresql://db/x', redisUrl: 'rediss://cache:6380' }),
    );
  });

  describe('TEST_CLOCK', () => {
    it('enabled turns the test clock on outside production', () => {
      expect(loadConfig({ TEST_CLOCK: 'enabled' }).testClockEnabled).toBe(true);
      expect(loadConfig({ TEST_CLOCK: 'enabled', NODE_ENV: 'test' }).testClockEnabled).toBe(true);
      expect(loadConfig({ TEST_CLOCK: 'off' }).testClockEnabled).toBe(false);
    });

    it('is refused with NODE_ENV=production', () => {
      const error = configError({ TEST_CLOCK: 'enabled', NODE_ENV: 'production' });
      expect(error.message).toMatch(/TEST_CLOCK/);
      expect(error.message).toMatch(/production/);
    });

    it('off is accepted in production', () => {
      expect(
        loadConfig({
          TEST_CLOCK: 'off',
          NODE_ENV: 'production',
          DATABASE_URL: 'postgres://db/x',
          WEBHOOK_SIGNING_KEY: 'Kq3vZ8xW1nL5tR9yB2mC6hJ0dF4gS7pA+uE/oI=N',
        }).testClockEnabled,
      ).toBe(false);
    });

    it('rejects unknown values', () => {
      expect(configError({ TEST_CLOCK: 'yes' }).message).toMatch(/^TEST_CLOCK/);
    });
  });

  describe('MIGRATIONS_RUN', () => {
    it('defaults to true', () => {
      expect(loadConfig({}).migrationsRun).toBe(true);
    });
    it.each([
      ['true', true],
      ['1', true],
      ['false', false],
      ['0', false],
    ])('%s -> %s', (raw, expected) => {
      expect(loadConfig({ MIGRATIONS_RUN: raw }).migrationsRun).toBe(expected);
    });
    it('rejects other values', () => {
      expect(configError({ MIGRATIONS_RUN: 'maybe' }).message).toMatch(/^MIGRATIONS_RUN/);
    });
  });

  describe('rejects bad values with a ConfigError naming the variable', () => {
    it.each(['abc', '-1', '65536', '3000.5', '80x'])('PORT=%s', (port) => {
      expect(configError({ PORT: port }).message).toMatch(/^PORT /);
    });

    it.each(['verbose', 'INFO', 'loud'])('LOG_LEVEL=%s', (level) => {
      const message = configError({ LOG_LEVEL: level }).message;
      expect(message).toMatch(/^LOG_LEVEL /);
      expect(message).toContain('fatal');
    });

    it.each(['mysql://db/x', 'http://db:5432/x', 'redis://db:6379'])('DATABASE_URL=%s (wrong protocol)', (url) => {
      expect(configError({ DATABASE_URL: url }).message).toMatch(/^DATABASE_URL /);
    });

    it('DATABASE_URL that is not a URL, without echoing it (it may hold a password)', () => {
      const message = configError({ DATABASE_URL: 'not a url with s3cret' }).message;
      expect(message).toMatch(/^DATABASE_URL /);
      expect(message).not.toContain('s3cret');
    });

    it('REDIS_URL with a wrong protocol', () => {
      expect(configError({ REDIS_URL: 'http://cache:6379' }).message).toMatch(/^REDIS_URL /);
    });

    it('OPERATOR_TOKEN shorter than 16 characters, without echoing it', () => {
      const message = configError({ OPERATOR_TOKEN: 'short-token' }).message;
      expect(message).toMatch(/^OPERATOR_TOKEN /);
      expect(message).not.toContain('short-token');
    });

    it('DB_POOL_SIZE out of range', () => {
      expect(configError({ DB_POOL_SIZE: '0' }).message).toMatch(/^DB_POOL_SIZE /);
    });

    it('REDIS_COMMAND_TIMEOUT_MS out of range', () => {
      expect(configError({ REDIS_COMMAND_TIMEOUT_MS: '5' }).message).toMatch(/^REDIS_COMMAND_TIMEOUT_MS /);
      expect(loadConfig({ REDIS_COMMAND_TIMEOUT_MS: '2000' }).redisCommandTimeoutMs).toBe(2000);
    });

    it('KEY_CACHE_TTL_MS out of range', () => {
      expect(configError({ KEY_CACHE_TTL_MS: '60001' }).message).toMatch(/^KEY_CACHE_TTL_MS /);
    });

    it('SDK_VERSION_ENFORCEMENT with an unknown value', () => {
      expect(configError({ SDK_VERSION_ENFORCEMENT: 'sometimes' }).message).toMatch(/^SDK_VERSION_ENFORCEMENT /);
    });
  });

  it('PORT accepts the whole range including 0 (any free port)', () => {
    expect(loadConfig({ PORT: '0' }).port).toBe(0);
    expect(loadConfig({ PORT: '65535' }).port).toBe(65535);
  });

  it('accepts every documented LOG_LEVEL', () => {
    for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace']) {
      expect(loadConfig({ LOG_LEVEL: level }).logLevel).toBe(level);
    }
  });

  it('SDK_VERSION_ENFORCEMENT ships dark and can be switched on', () => {
    expect(loadConfig({}).sdkVersionEnforcement).toBe(false);
    expect(loadConfig({ SDK_VERSION_ENFORCEMENT: 'enabled' }).sdkVersionEnforcement).toBe(true);
  });

  it('ANDROID_PUBLISHER_BASE_URL: an http(s) root, with a trailing slash', () => {
    expect(loadConfig({ ANDROID_PUBLISHER_BASE_URL: 'http://127.0.0.1:9000' }).androidPublisherBaseUrl).toBe('http://127.0.0.1:9000/');
    expect(loadConfig({ ANDROID_PUBLISHER_BASE_URL: 'https://proxy.internal/google/' }).androidPublisherBaseUrl).toBe('https://proxy.internal/google/');
    expect(loadConfig({ CARD_PAYMENTS_API_BASE_URL: 'http://127.0.0.1:9001/' }).cardPaymentsApiBaseUrl).toBe('http://127.0.0.1:9001');
    expect(loadConfig({ APP_STORE_SERVER_API_BASE_URL: 'http://127.0.0.1:9002' }).appStoreServerApiBaseUrl).toBe('http://127.0.0.1:9002');
    expect(loadConfig({ APP_STORE_SERVER_API_SANDBOX_BASE_URL: 'http://127.0.0.1:9003/' }).appStoreServerApiSandboxBaseUrl).toBe('http://127.0.0.1:9003');
    expect(() => loadConfig({ CARD_PAYMENTS_API_BASE_URL: 'ftp://x' })).toThrow(/CARD_PAYMENTS_API_BASE_URL/);
    expect(() => loadConfig({ RAIL_READ_TIMEOUT_MS: '5' })).toThrow(/RAIL_READ_TIMEOUT_MS/);
    expect(loadConfig({}).railExpiryReadsConcurrency).toBe(32);
    expect(loadConfig({ RAIL_EXPIRY_READS_CONCURRENCY: '256' }).railExpiryReadsConcurrency).toBe(256);
    for (const bad of ['0', '257', '-3', '4.5', 'many'])
      expect(() => loadConfig({ RAIL_EXPIRY_READS_CONCURRENCY: bad })).toThrow(/RAIL_EXPIRY_READS_CONCURRENCY/);
    expect(configError({ ANDROID_PUBLISHER_BASE_URL: 'ftp://x' }).message).toMatch(/^ANDROID_PUBLISHER_BASE_URL /);
  });

  it('BACKGROUND_JOBS: enabled by default; disabled on API replicas beside job runners; nothing else', () => {
    expect(loadConfig({ BACKGROUND_JOBS: 'disabled' }).backgroundJobs).toBe(false);
    expect(
      loadConfig({
        BACKGROUND_JOBS: 'enabled',
        NODE_ENV: 'production',
        DATABASE_URL: 'postgres://db/x',
        WEBHOOK_SIGNING_KEY: 'Kq3vZ8xW1nL5tR9yB2mC6hJ0dF4gS7pA+uE/oI=N',
      }).backgroundJobs,
    ).toBe(true);
    for (const bad of ['off', 'false', 'jobs']) expect(() => loadConfig({ BACKGROUND_JOBS: bad })).toThrow(/^BACKGROUND_JOBS must be one of enabled, disabled/);
  });

  describe('RAIL_SECRETS_FILE', () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(path.join(tmpdir(), 'config-spec-'));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('accepts a readable JSON file', () => {
      const file = path.join(dir, 'ok.json');
      writeFileSync(file, '{"proj_1":{"webhookSecret":"whsec_x"}}');
      expect(loadConfig({ RAIL_SECRETS_FILE: file }).railSecretsFile).toBe(file);
    });

    it('rejects a missing or malformed file without printing its content', () => {
      expect(configError({ RAIL_SECRETS_FILE: path.join(dir, 'missing.json') }).message).toMatch(/^RAIL_SECRETS_FILE /);
      const file = path.join(dir, 'bad.json');
      writeFileSync(file, 'whsec_topsecret');
      const message = configError({ RAIL_SECRETS_FILE: file }).message;
      expect(message).toMatch(/^RAIL_SECRETS_FILE /);
      expect(message).not.toContain('whsec_topsecret');
    });
  });

  it('reads process.env when called without an argument', () => {
    const saved = process.env.REGION;
    process.env.REGION = 'ap-south-1';
    try {
      expect(loadConfig().region).toBe('ap-south-1');
    } finally {
      if (saved === undefined) delete process.env.REGION;
      else process.env.REGION = saved;
    }
  });
  describe('outbound webhooks', () => {
    it('WEBHOOK_SIGNING_KEY: at least 32 bytes; required in production', () => {
      expect(configError({ WEBHOOK_SIGNING_KEY: 'short' }).message).toBe('WEBHOOK_SIGNING_KEY must be at least 32 bytes');
      expect(configError({ NODE_ENV: 'production', DATABASE_URL: 'postgres://db/x' }).message).toBe('WEBHOOK_SIGNING_KEY is required when NODE_ENV=production');
      expect(loadConfig({ WEBHOOK_SIGNING_KEY: 'k'.repeat(32) }).webhookSigningKey).toBe('k'.repeat(32));
      expect(loadConfig({}).webhookSigningKey).toBeUndefined();
    });

    it('WEBHOOKS_ALLOW_PRIVATE=true is refused in production', () => {
      expect(loadConfig({ WEBHOOKS_ALLOW_PRIVATE: 'true' }).webhooksAllowPrivate).toBe(true);
      expect(
        configError({
          WEBHOOKS_ALLOW_PRIVATE: 'true',
          NODE_ENV: 'production',
          DATABASE_URL: 'postgres://db/x',
          WEBHOOK_SIGNING_KEY: 'Kq3vZ8xW1nL5tR9yB2mC6hJ0dF4gS7pA+uE/oI=N',
        }).message,
      ).toBe('WEBHOOKS_ALLOW_PRIVATE=true is refused when NODE_ENV=production');
    });
  });

  describe('PUBLIC_BASE_URL', () => {
    const production = { NODE_ENV: 'production', DATABASE_URL: 'postgres://db/x', WEBHOOK_SIGNING_KEY: 'Kq3vZ8xW1nL5tR9yB2mC6hJ0dF4gS7pA+uE/oI=N' };

    it('is a scheme and host with an optional port; a trailing slash is dropped', () => {
      expect(loadConfig({ PUBLIC_BASE_URL: 'https://api.example.com' }).publicBaseUrl).toBe('https://api.example.com');
      expect(loadConfig({ PUBLIC_BASE_URL: 'https://API.example.com:8443/' }).publicBaseUrl).toBe('https://api.example.com:8443');
      expect(loadConfig({ PUBLIC_BASE_URL: 'http://10.0.0.5:3000' }).publicBaseUrl).toBe('http://10.0.0.5:3000');
    });

    it('refuses anything but an http(s) origin', () => {
      for (const bad of [
        'api.example.com',
        'ftp://api.example.com',
        'https://api.example.com/v1',
        'https://api.example.com/?a=1',
        'https://api.example.com?',
        'https://api.example.com#x',
        'https://u:p@api.example.com',
      ]) {
        expect({ bad, message: configError({ PUBLIC_BASE_URL: bad }).message }).toEqual({ bad, message: expect.stringMatching(/^PUBLIC_BASE_URL /) });
      }
    });

    it('defaults to http://localhost:<PORT> outside production', () => {
      expect(loadConfig({}).publicBaseUrl).toBe('http://localhost:3000');
      expect(loadConfig({ PORT: '8080', OPERATOR_TOKEN: 'o'.repeat(16) }).publicBaseUrl).toBe('http://localhost:8080');
    });

    it('is required in production when OPERATOR_TOKEN is set (the console and OAuth are served)', () => {
      expect(configError({ ...production, OPERATOR_TOKEN: STRONG_OPERATOR_TOKEN }).message).toMatch(
        /^PUBLIC_BASE_URL is required when NODE_ENV=production and OPERATOR_TOKEN is set/,
      );
      expect(loadConfig({ ...production, OPERATOR_TOKEN: STRONG_OPERATOR_TOKEN, PUBLIC_BASE_URL: 'https://api.example.com' }).publicBaseUrl).toBe(
        'https://api.example.com',
      );
      expect(() => loadConfig(production)).not.toThrow();
    });
  });

  describe('TRUST_PROXY', () => {
    it('is off by default: the socket address is the client', () => {
      expect(loadConfig({}).trustProxy).toBe(false);
      expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    });

    it('true, a hop count, or proxy addresses and CIDR ranges as Fastify understands them', () => {
      expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
      expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
      expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 192.168.1.7,fd00::/8, loopback' }).trustProxy).toEqual([
        '10.0.0.0/8',
        '192.168.1.7',
        'fd00::/8',
        'loopback',
      ]);
    });

    it('refuses anything else', () => {
      for (const bad of ['yes', '0', '33', '10.0.0.0/33', '10.0.0.0/8/1', 'proxy.internal', '10.0.0.0/8,', 'fd00::/129']) {
        expect({ bad, message: configError({ TRUST_PROXY: bad }).message }).toEqual({ bad, message: expect.stringMatching(/^TRUST_PROXY/) });
      }
    });
  });

  describe('production safety', () => {
    it('refuses NODE_ENV=production without DATABASE_URL with one line', () => {
      const error = configError({ NODE_ENV: 'production' });
      expect(error.message).toMatch(/^DATABASE_URL is required when NODE_ENV=production/);
      expect(error.message).not.toContain('\n');
      expect(configError({ NODE_ENV: 'production', DATABASE_URL: '' }).message).toMatch(/^DATABASE_URL /);
    });

    it('keeps the embedded fallback outside production', () => {
      expect(loadConfig({ NODE_ENV: 'development' }).databaseUrl).toBeUndefined();
      expect(loadConfig({ NODE_ENV: 'test' }).databaseUrl).toBeUndefined();
    });
  });

  describe('SHUTDOWN_DELAY_MS and METRICS_PORT', () => {
    it('drain delay defaults to 5000 in production and 0 otherwise', () => {
      expect(
        loadConfig({ NODE_ENV: 'production', DATABASE_URL: 'postgres://db/x', WEBHOOK_SIGNING_KEY: 'Kq3vZ8xW1nL5tR9yB2mC6hJ0dF4gS7pA+uE/oI=N' })
          .shutdownDelayMs,
      ).toBe(5000);
      expect(loadConfig({}).shutdownDelayMs).toBe(0);
      expect(loadConfig({ SHUTDOWN_DELAY_MS: '1500' }).shutdownDelayMs).toBe(1500);
      expect(configError({ SHUTDOWN_DELAY_MS: '-1' }).message).toMatch(/^SHUTDOWN_DELAY_MS /);
    });

    it('metrics port defaults to 9464; 0 turns it off', () => {
      expect(loadConfig({}).metricsPort).toBe(9464);
      expect(loadConfig({ METRICS_PORT: '0' }).metricsPort).toBe(0);
      expect(configError({ METRICS_PORT: 'x' }).message).toMatch(/^METRICS_PORT /);
    });
  });
});
