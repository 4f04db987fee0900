import { isIP } from 'node:net';
import { readFileSync } from 'node:fs';
import { EXAMPLE_SECRET_VALUES, PLACEHOLDER_WORDS, weakSecretMessage, weakSecretReason } from './secret-strength.js';

/** Limiter stores' Redis command timeout unless REDIS_COMMAND_TIMEOUT_MS says otherwise. */
export const DEFAULT_REDIS_COMMAND_TIMEOUT_MS = 100;

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Typed, validated configuration. Built once at start; nothing else reads process.env. */
export interface AppConfig {
  nodeEnv: string;
  port: number;
  host: string;
  /** Unset means "use the embedded PostgreSQL" (never in production); main.ts fills it in before the app starts. */
  databaseUrl: string | undefined;
  redisUrl: string | undefined;
  /** Command timeout of the limiter stores' Redis calls; past it a decision fails open. */
  redisCommandTimeoutMs: number;
  operatorToken: string | undefined;
  testClockEnabled: boolean;
  migrationsRun: boolean;
  logLevel: LogLevel;
  railSecretsFile: string | undefined;
  /** Root of the Android Publisher API (a stand-in in tests and air-gapped installs); ends with `/`. */
  androidPublisherBaseUrl: string;
  /** Root of the card processor's REST API (CARD_PAYMENTS_API_BASE_URL); a stand-in in tests and air-gapped installs. */
  cardPaymentsApiBaseUrl: string;
  /** Roots of the App Store Server API, production and sandbox (APP_STORE_SERVER_API_BASE_URL, …_SANDBOX_BASE_URL); no trailing `/`. */
  appStoreServerApiBaseUrl: string;
  appStoreServerApiSandboxBaseUrl: string;
  /** RAIL_READ_TIMEOUT_MS: a read of a rail's API is cut after it (10 s by default). */
  railReadTimeoutMs: number;
  /** RAIL_EXPIRY_READS_CONCURRENCY: store reads at expiry in flight at once per replica (1 – 256, 32 by default). */
  railExpiryReadsConcurrency: number;
  /**
   * BACKGROUND_JOBS (enabled): this replica runs the durable jobs and the webhook dispatcher.
   * `disabled` on API replicas beside job-runner replicas, so reconciliations and deliveries
   * never share the public reads' event loop.
   */
  backgroundJobs: boolean;
  serviceName: string;
  region: string;
  /** Ships dark: the 426 sdk_version_unsupported rule is only enforced when true. */
  sdkVersionEnforcement: boolean;
  /** Database pool size per replica; bounded so ingestion cannot starve the rest. */
  dbPoolSize: number;
  /** DB_PREPARED_STATEMENTS (true): hot statements run as named prepared statements; false behind a pooler that does not keep them per client. */
  dbPreparedStatements: boolean;
  /** The event write keeps the per-day error, analytics and acquisition rollups (EVENT_ROLLUPS; off only to measure their ingestion cost). */
  eventRollups: boolean;
  /** Event batch statements one replica runs at most at once (group commit: batches that wait share the next statement); below the pool size. */
  eventsWriteSlots: number;
  /** How long a replica serves an API key from memory: the bound on cross-replica revocation. */
  keyCacheTtlMs: number;
  /** Development only: lets an identity provider's jwksUri use http and loopback/private addresses. */
  jwksAllowPrivate: boolean;
  /** Node's headersTimeout: the whole request head must arrive within it. */
  httpHeadersTimeoutMs: number;
  /** Node's requestTimeout: the whole request (head and body) must arrive within it. */
  httpRequestTimeoutMs: number;
  /** Idle keep-alive connections are closed after it (above load balancers' 60 s idle timeout). */
  httpKeepAliveTimeoutMs: number;
  /** PostgreSQL statement_timeout of the application's connections. */
  dbStatementTimeoutMs: number;
  /** How long a request waits for a pooled connection (pg connectionTimeoutMillis). */
  dbPoolAcquireTimeoutMs: number;
  /** SIGTERM: how long readiness answers 503 while the listener still serves (load balancers catch up). */
  shutdownDelayMs: number;
  /** Port of the Prometheus listener (`GET /metrics`); 0 turns it off. */
  metricsPort: number;
  /** NATS server with JetStream: when set, event batches are acknowledged after a durable append there and written by a consumer. */
  eventsBufferUrl: string | undefined;
  /** JetStream stream holding buffered batches (its subject is `<stream>.batches`). */
  eventsBufferStream: string;
  /** Replicas of that stream (1 on one server; 3 on a NATS cluster, so an append survives a server's loss). */
  eventsBufferReplicas: number;
  /** WEBHOOK_SIGNING_KEY: every outbound webhook secret is derived from it (at least 32 bytes; required in production; development keeps one under .data/). */
  webhookSigningKey: string | undefined;
  /** WEBHOOKS_ALLOW_PRIVATE: development only, lets webhook endpoints use http and loopback/private addresses. */
  webhooksAllowPrivate: boolean;
  /** Source-map uploads decoded at once on this replica; more wait (SOURCEMAP_UPLOAD_QUEUE_MS), then 503. */
  sourcemapUploadConcurrency: number;
  /** Declared body bytes of source-map uploads admitted at once on this replica. */
  sourcemapUploadBytesInFlight: number;
  /** How long an upload waits for room before 503 with Retry-After. */
  sourcemapUploadQueueMs: number;
  /** Worker threads that decode source-map uploads off the event loop. */
  sourcemapDecodeWorkers: number;
  /** DOCS_ENABLED: `/docs`, `/docs/json`, `/docs/yaml` served (default on outside production, off in production). */
  docsEnabled: boolean;
  /** DOCS_OPERATOR: the document lists the operator API (only with OPERATOR_TOKEN set too); off unless asked. */
  docsOperator: boolean;
  /** CONSOLE_DIR: the built console (index.html and assets/), served under /console when OPERATOR_TOKEN is set. */
  consoleDir: string;
  /**
   * PUBLIC_BASE_URL: the scheme and host clients reach the service at (`https://api.example.com`,
   * no path): the OAuth issuer and every advertised endpoint URL are built from it, never from
   * a request's Host. Required in production when OPERATOR_TOKEN is set; `http://localhost:<PORT>` otherwise.
   */
  publicBaseUrl: string;
  /**
   * TRUST_PROXY: which proxies in front of the service may name the client (X-Forwarded-For),
   * as Fastify's `trustProxy` understands it: false (the socket's address is the client's),
   * true (the left-most forwarded address), a hop count, or addresses and CIDR ranges of the proxies.
   */
  trustProxy: TrustProxy;
}

/** Fastify's `trustProxy` values the service accepts (see AppConfig.trustProxy). */
export type TrustProxy = boolean | number | string[];

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')} (got "${raw}")`);
  }
  return raw as T;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max} (got "${raw}")`);
  }
  return value;
}

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} is not a valid URL`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(' or ')} (got "${parsed.protocol}")`);
  }
  return raw;
}

function flag(env: Env, name: string, onValues: string[], fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (onValues.includes(raw)) return true;
  if (['false', 'off', 'disabled', '0'].includes(raw)) return false;
  throw new ConfigError(`${name} must be one of ${[...onValues, 'false', 'off', 'disabled', '0'].join(', ')} (got "${raw}")`);
}

function streamName(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(raw)) throw new ConfigError(`${name} must be 1 to 64 letters, digits, '_' or '-' (got "${raw}")`);
  return raw;
}

/** A folder path (relative paths are resolved from the working directory); the folder itself may not exist yet. */
function directoryPath(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw.includes('\0') || /[\r\n]/.test(raw)) throw new ConfigError(`${name} must be a folder path (got "${raw}")`);
  return raw;
}

/** An origin: http(s), a host, an optional port, nothing else (no credentials, path, query or fragment). */
function baseUrl(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an absolute http(s) URL such as https://api.example.com (got "${raw}")`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new ConfigError(`${name} must use https: or http: (got "${parsed.protocol}")`);
  if (parsed.username || parsed.password || parsed.pathname !== '/' || parsed.search || parsed.hash || raw.endsWith('?') || raw.endsWith('#')) {
    throw new ConfigError(`${name} must be a scheme and host with an optional port, without path, query or credentials (got "${raw}")`);
  }
  return parsed.origin;
}

/** Named ranges Fastify's trustProxy (proxy-addr) understands beside addresses and CIDR ranges. */
const TRUST_PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

function cidrOrAddress(value: string): boolean {
  if (TRUST_PROXY_RANGE_NAMES.includes(value)) return true;
  const [address, prefix, ...rest] = value.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

function trustProxy(env: Env, name: string): TrustProxy {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  if (/^\d+$/.test(raw)) {
    const hops = Number(raw);
    if (hops < 1 || hops > 32) throw new ConfigError(`${name}: a hop count is between 1 and 32 (got "${raw}")`);
    return hops;
  }
  const entries = raw.split(',').map((entry) => entry.trim());
  const refused = entries.find((entry) => !cidrOrAddress(entry));
  if (refused !== undefined) {
    throw new ConfigError(
      `${name} must be false, true, a hop count, or a comma-separated list of proxy addresses and CIDR ranges (loopback, linklocal, uniquelocal too); "${refused}" is none of these`,
    );
  }
  return entries;
}

export const DEFAULT_ANDROID_PUBLISHER_BASE_URL = 'https://androidpublisher.googleapis.com/';

export const DEFAULT_CARD_PAYMENTS_API_BASE_URL = 'https://api.stripe.com';
export const DEFAULT_APP_STORE_SERVER_API_BASE_URL = 'https://api.storekit.itunes.apple.com';
export const DEFAULT_APP_STORE_SERVER_API_SANDBOX_BASE_URL = 'https://api.storekit-sandbox.itunes.apple.com';
/** The bound on one read of a rail's API (docs/rails.md, "Reading the rails"). */
export const DEFAULT_RAIL_READ_TIMEOUT_MS = 10_000;

function withoutTrailingSlash(value: string): string {
  return value.replace(/\/+$/, '');
}

function withTrailingSlash(value: string): string {
  return value.endsWith('/') ? value : `${value}/`;
}

/**
 * Production refuses weak secrets: the service's own (OPERATOR_TOKEN, which also signs the
 * console's session cookies, and WEBHOOK_SIGNING_KEY) must look generated; the passwords inside
 * DATABASE_URL and REDIS_URL, chosen with those servers, must at least not be an example value
 * or a placeholder.
 */
function refuseWeakSecrets(secrets: Record<string, string | undefined>): void {
  for (const [name, value] of Object.entries(secrets)) {
    if (value === undefined) continue;
    const reason = weakSecretReason(value);
    if (reason !== null) throw new ConfigError(weakSecretMessage(name, reason));
  }
}

function refuseExamplePasswords(urls: Record<string, string | undefined>): void {
  for (const [name, value] of Object.entries(urls)) {
    if (value === undefined) continue;
    const raw = new URL(value).password;
    if (raw === '') continue;
    let password = raw;
    try {
      password = decodeURIComponent(raw);
    } catch {
      // A password with a stray '%' is checked as written.
    }
    const lower = password.toLowerCase();
    const placeholder = EXAMPLE_SECRET_VALUES.includes(password) || PLACEHOLDER_WORDS.some((word) => word.length > 3 && lower.includes(word));
    if (placeholder) throw new ConfigError(`${name} is refused when NODE_ENV=production: its password is an example value or contains a placeholder`);
  }
}

/** Parses and validates the environment. Throws ConfigError with a one-line message. */
export function loadConfig(env: Env = process.env): AppConfig {
  const nodeEnv = env.NODE_ENV ?? 'development';
  const testClockEnabled = oneOf(env, 'TEST_CLOCK', ['enabled', 'off', 'disabled'], 'off') === 'enabled';
  if (testClockEnabled && nodeEnv === 'production') {
    throw new ConfigError('TEST_CLOCK=enabled is refused when NODE_ENV=production');
  }
  const operatorToken = env.OPERATOR_TOKEN || undefined;
  const webhookSigningKey = env.WEBHOOK_SIGNING_KEY || undefined;
  // Production holds the secrets to a stricter bar below (refuseWeakSecrets).
  if (operatorToken !== undefined && operatorToken.length < 16 && nodeEnv !== 'production') {
    throw new ConfigError('OPERATOR_TOKEN must be at least 16 characters');
  }
  const jwksAllowPrivate = flag(env, 'JWKS_ALLOW_PRIVATE', ['true', '1'], false);
  if (jwksAllowPrivate && nodeEnv === 'production') {
    throw new ConfigError('JWKS_ALLOW_PRIVATE=true is refused when NODE_ENV=production');
  }
  const databaseUrl = url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']);
  if (databaseUrl === undefined && nodeEnv === 'production') {
    throw new ConfigError('DATABASE_URL is required when NODE_ENV=production (the embedded PostgreSQL is for development and tests only)');
  }
  const railSecretsFile = env.RAIL_SECRETS_FILE || undefined;
  if (railSecretsFile !== undefined) {
    try {
      JSON.parse(readFileSync(railSecretsFile, 'utf8'));
    } catch {
      throw new ConfigError(`RAIL_SECRETS_FILE (${railSecretsFile}) is not a readable JSON file`);
    }
  }
  const httpHeadersTimeoutMs = integer(env, 'HTTP_HEADERS_TIMEOUT_MS', 20_000, 100, 600_000);
  const httpRequestTimeoutMs = integer(env, 'HTTP_REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000);
  if (httpHeadersTimeoutMs > httpRequestTimeoutMs) {
    throw new ConfigError('HTTP_HEADERS_TIMEOUT_MS must not exceed HTTP_REQUEST_TIMEOUT_MS');
  }
  const dbPoolSize = integer(env, 'DB_POOL_SIZE', 10, 1, 200);
  const eventsWriteSlots = integer(env, 'EVENTS_WRITE_SLOTS', Math.min(4, Math.max(1, dbPoolSize - 1)), 1, 200);
  if (eventsWriteSlots > Math.max(1, dbPoolSize - 1)) {
    throw new ConfigError('EVENTS_WRITE_SLOTS must leave at least one connection of DB_POOL_SIZE to the rest of the API');
  }
  if (webhookSigningKey !== undefined && Buffer.byteLength(webhookSigningKey) < 32 && nodeEnv !== 'production') {
    throw new ConfigError('WEBHOOK_SIGNING_KEY must be at least 32 bytes');
  }
  if (webhookSigningKey === undefined && nodeEnv === 'production') {
    throw new ConfigError('WEBHOOK_SIGNING_KEY is required when NODE_ENV=production');
  }
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const publicBaseUrl = baseUrl(env, 'PUBLIC_BASE_URL');
  if (publicBaseUrl === undefined && operatorToken !== undefined && nodeEnv === 'production') {
    throw new ConfigError('PUBLIC_BASE_URL is required when NODE_ENV=production and OPERATOR_TOKEN is set (the OAuth issuer and endpoints are built from it)');
  }
  const webhooksAllowPrivate = flag(env, 'WEBHOOKS_ALLOW_PRIVATE', ['true', '1'], false);
  if (webhooksAllowPrivate && nodeEnv === 'production') {
    throw new ConfigError('WEBHOOKS_ALLOW_PRIVATE=true is refused when NODE_ENV=production');
  }
  const redisUrl = url(env, 'REDIS_URL', ['redis:', 'rediss:']);
  if (nodeEnv === 'production') {
    refuseWeakSecrets({ OPERATOR_TOKEN: operatorToken, WEBHOOK_SIGNING_KEY: webhookSigningKey });
    refuseExamplePasswords({ DATABASE_URL: databaseUrl, REDIS_URL: redisUrl });
  }
  return {
    nodeEnv,
    port,
    host: env.HOST || '0.0.0.0',
    databaseUrl,
    redisUrl,
    redisCommandTimeoutMs: integer(env, 'REDIS_COMMAND_TIMEOUT_MS', DEFAULT_REDIS_COMMAND_TIMEOUT_MS, 10, 10_000),
    operatorToken,
    testClockEnabled,
    migrationsRun: flag(env, 'MIGRATIONS_RUN', ['true', '1'], true),
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    railSecretsFile,
    androidPublisherBaseUrl: withTrailingSlash(url(env, 'ANDROID_PUBLISHER_BASE_URL', ['https:', 'http:']) ?? DEFAULT_ANDROID_PUBLISHER_BASE_URL),
    cardPaymentsApiBaseUrl: withoutTrailingSlash(url(env, 'CARD_PAYMENTS_API_BASE_URL', ['https:', 'http:']) ?? DEFAULT_CARD_PAYMENTS_API_BASE_URL),
    appStoreServerApiBaseUrl: withoutTrailingSlash(url(env, 'APP_STORE_SERVER_API_BASE_URL', ['https:', 'http:']) ?? DEFAULT_APP_STORE_SERVER_API_BASE_URL),
    appStoreServerApiSandboxBaseUrl: withoutTrailingSlash(
      url(env, 'APP_STORE_SERVER_API_SANDBOX_BASE_URL', ['https:', 'http:']) ?? DEFAULT_APP_STORE_SERVER_API_SANDBOX_BASE_URL,
    ),
    railReadTimeoutMs: integer(env, 'RAIL_READ_TIMEOUT_MS', DEFAULT_RAIL_READ_TIMEOUT_MS, 100, 60_000),
    railExpiryReadsConcurrency: integer(env, 'RAIL_EXPIRY_READS_CONCURRENCY', 32, 1, 256),
    backgroundJobs: oneOf(env, 'BACKGROUND_JOBS', ['enabled', 'disabled'], 'enabled') === 'enabled',
    serviceName: env.SERVICE_NAME || 'entitlements',
    region: env.REGION || 'local',
    sdkVersionEnforcement: flag(env, 'SDK_VERSION_ENFORCEMENT', ['enabled', 'true', 'on', '1'], false),
    dbPoolSize,
    dbPreparedStatements: flag(env, 'DB_PREPARED_STATEMENTS', ['true', '1'], true),
    eventRollups: flag(env, 'EVENT_ROLLUPS', ['true', 'on', '1'], true),
    eventsWriteSlots,
    keyCacheTtlMs: integer(env, 'KEY_CACHE_TTL_MS', 5000, 0, 60_000),
    jwksAllowPrivate,
    httpHeadersTimeoutMs,
    httpRequestTimeoutMs,
    httpKeepAliveTimeoutMs: integer(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS', 65_000, 1_000, 600_000),
    dbStatementTimeoutMs: integer(env, 'DB_STATEMENT_TIMEOUT_MS', 5_000, 10, 600_000),
    dbPoolAcquireTimeoutMs: integer(env, 'DB_POOL_ACQUIRE_TIMEOUT_MS', 2_000, 10, 60_000),
    shutdownDelayMs: integer(env, 'SHUTDOWN_DELAY_MS', nodeEnv === 'production' ? 5000 : 0, 0, 120_000),
    metricsPort: integer(env, 'METRICS_PORT', 9464, 0, 65535),
    eventsBufferUrl: url(env, 'EVENTS_BUFFER_URL', ['nats:', 'tls:']),
    eventsBufferStream: streamName(env, 'EVENTS_BUFFER_STREAM', 'EVENTS'),
    eventsBufferReplicas: integer(env, 'EVENTS_BUFFER_REPLICAS', 1, 1, 5),
    webhookSigningKey,
    webhooksAllowPrivate,
    sourcemapUploadConcurrency: integer(env, 'SOURCEMAP_UPLOAD_CONCURRENCY', 2, 1, 64),
    sourcemapUploadBytesInFlight: integer(env, 'SOURCEMAP_UPLOAD_BYTES_IN_FLIGHT', 100 * 1024 * 1024, 1024 * 1024, 4 * 1024 * 1024 * 1024),
    sourcemapUploadQueueMs: integer(env, 'SOURCEMAP_UPLOAD_QUEUE_MS', 10_000, 0, 60_000),
    sourcemapDecodeWorkers: integer(env, 'SOURCEMAP_DECODE_WORKERS', 1, 1, 16),
    docsEnabled: flag(env, 'DOCS_ENABLED', ['true', 'on', '1'], nodeEnv !== 'production'),
    docsOperator: flag(env, 'DOCS_OPERATOR', ['true', 'on', '1'], false),
    consoleDir: directoryPath(env, 'CONSOLE_DIR', 'dist/console'),
    publicBaseUrl: publicBaseUrl ?? `http://localhost:${port}`,
    trustProxy: trustProxy(env, 'TRUST_PROXY'),
  };
}

/** Nest injection token for the AppConfig object. */
export const APP_CONFIG = Symbol('APP_CONFIG');
