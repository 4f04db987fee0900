import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '#platform';
import { deriveSecret } from '../domain/webhook-signatures.js';

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

/**
 * Signing secrets of endpoints, derived from WEBHOOK_SIGNING_KEY and never stored: the
 * endpoint id and its secret version name the secret. Changing the key changes every secret.
 */
@Injectable()
export class WebhookSecrets {
  private readonly key: Buffer;

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
}
