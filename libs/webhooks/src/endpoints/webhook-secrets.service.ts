import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '#platform';
import { deriveSecret, standardSigningKey } from '../domain/webhook-signatures.js';

/** Where development keeps its generated signing key (git-ignored, like the embedded database). */
export const DEV_SIGNING_KEY_FILE = '.data/webhook-signing-key';

/** Development: the key kept under .data/, created once (0600). Tests: a fresh key per process. */
function developmentKey(nodeEnv: string): Buffer {
  if (nodeEnv === 'test') return randomBytes(32);
  if (existsSync(DEV_SIGNING_KEY_FILE)) return Buffer.from(readFileSync(DEV_SIGNING_KEY_FILE, 'utf8').trim(), 'utf8');
  const key = randomBytes(32).toString('base64');
  mkdirSync(dirname(DEV_SIGNING_KEY_FILE), { recursive: true });
  writeFileSync(DEV_SIGNING_KEY_FILE, `${key}\n`, { mode: 0o600, flag: 'wx' });
  return Buffer.from(key, 'utf8');
}

/** An endpoint's signing secrets, newest first, with their Standard Webhooks keys. */
export interface SigningKeys {
  secrets: readonly string[];
  standardKeys: readonly Buffer[];
}

/** Derived keys kept at most; past it the cache starts over (each is one HMAC to derive again). */
const MAX_CACHED_KEYS = 4096;

/**
 * Signing secrets of endpoints, derived from WEBHOOK_SIGNING_KEY and never stored: the
 * endpoint id and its secret version name the secret. Changing the key changes every secret.
 */
@Injectable()
export class WebhookSecrets {
  private readonly key: Buffer;
  /** Per endpoint id, version and whether the previous secret still signs: deliveries sign with these without deriving again. */
  private readonly keys = new Map<string, SigningKeys>();

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.key = config.webhookSigningKey !== undefined ? Buffer.from(config.webhookSigningKey, 'utf8') : developmentKey(config.nodeEnv);
  }

  secret(endpointId: string, version: number): string {
    return deriveSecret(this.key, endpointId, version);
  }

  /** The secrets that sign now, newest first: the current one, and the previous one during the 24 h after a rotation. */
  signingSecrets(endpoint: { id: string; secretVersion: number; previousSecretExpiresMs: number | null }, nowMs: number): string[] {
    const secrets = [this.secret(endpoint.id, endpoint.secretVersion)];
    if (endpoint.secretVersion > 1 && endpoint.previousSecretExpiresMs !== null && endpoint.previousSecretExpiresMs > nowMs) {
      secrets.push(this.secret(endpoint.id, endpoint.secretVersion - 1));
    }
    return secrets;
  }

  /** signingSecrets(), derived once per endpoint and version. */
  signingKeys(endpoint: { id: string; secretVersion: number; previousSecretExpiresMs: number | null }, nowMs: number): SigningKeys {
    const withPrevious = endpoint.secretVersion > 1 && endpoint.previousSecretExpiresMs !== null && endpoint.previousSecretExpiresMs > nowMs;
    const cacheKey = `${endpoint.id}:${endpoint.secretVersion}:${withPrevious ? 2 : 1}`;
    const cached = this.keys.get(cacheKey);
    if (cached) return cached;
    const secrets = this.signingSecrets(endpoint, nowMs);
    const keys: SigningKeys = { secrets, standardKeys: secrets.map(standardSigningKey) };
    if (this.keys.size >= MAX_CACHED_KEYS) this.keys.clear();
    this.keys.set(cacheKey, keys);
    return keys;
  }
}
