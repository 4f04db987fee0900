import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, APP_LOGGER, type AppConfig, type AppLogger, ConfigError } from '#platform';
import {
  type AndroidStoreSecrets,
  type CardPaymentsSecrets,
  EMPTY_RAIL_SECRETS,
  type IosStoreSecrets,
  parseRailSecrets,
  type RailSecretsContent,
  RailSecretsError,
} from './rail-secrets.js';

/** How often the file is checked for a change (a changed file is picked up within 5 s). */
export const RAIL_SECRETS_CHECK_INTERVAL_MS = 1000;

/**
 * The rail secrets of every project, from `RAIL_SECRETS_FILE`. Loaded at start (a malformed
 * file stops the process), re-read when its content changes (a malformed file is logged and
 * the last good content stays). Secrets stay in memory: never logged, never stored.
 */
@Injectable()
export class RailSecrets implements OnModuleInit, OnModuleDestroy {
  private content: RailSecretsContent = EMPTY_RAIL_SECRETS;
  private fingerprint: string | null = null;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  onModuleInit(): void {
    const file = this.config.railSecretsFile;
    if (!file) return;
    const failure = this.tryLoad(file);
    if (failure) throw new ConfigError(`RAIL_SECRETS_FILE (${file}) ${failure}`);
    this.timer = setInterval(() => this.reloadIfChanged(), RAIL_SECRETS_CHECK_INTERVAL_MS);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  cardPayments(projectId: string): CardPaymentsSecrets | null {
    return this.project(projectId)?.card_payments ?? null;
  }

  androidStore(projectId: string): AndroidStoreSecrets | null {
    return this.project(projectId)?.android_store ?? null;
  }

  iosStore(projectId: string): IosStoreSecrets | null {
    return this.project(projectId)?.ios_store ?? null;
  }

  /** Whether the file holds secrets of this rail for the project (`secretsConfigured` of `GET …/rails`; RailSecretsStatus). */
  isConfigured(projectId: string, rail: 'ios_store' | 'card_payments' | 'android_store'): boolean {
    return this.project(projectId)?.[rail] !== undefined;
  }

  /** Which of the rail's secrets the file holds for the project, as booleans (RailSecretsStatus). */
  secretKinds(projectId: string, rail: 'ios_store' | 'card_payments' | 'android_store'): { webhook: boolean | null; read: boolean | null } {
    const project = this.project(projectId);
    if (rail === 'card_payments') return { webhook: (project?.card_payments?.webhookSecrets.length ?? 0) > 0, read: Boolean(project?.card_payments?.apiKey) };
    if (rail === 'android_store') return { webhook: Boolean(project?.android_store?.pushToken), read: Boolean(project?.android_store?.serviceAccount) };
    return { webhook: null, read: project?.ios_store !== undefined };
  }

  /** Checks the file now (the timer calls this; tests may too). Never throws. */
  reloadIfChanged(): void {
    const file = this.config.railSecretsFile;
    if (!file) return;
    const failure = this.tryLoad(file);
    if (failure) this.logger.error({ component: 'rail-secrets', file }, `RAIL_SECRETS_FILE ${failure}; the last good content stays in force`);
  }

  /** Loads the file if it changed; answers why it could not (null when it could). */
  private tryLoad(file: string): string | null {
    try {
      this.load(file);
      return null;
    } catch (err) {
      return err instanceof RailSecretsError ? err.message : 'is not readable';
    }
  }

  private project(projectId: string) {
    return Object.prototype.hasOwnProperty.call(this.content.projects, projectId) ? this.content.projects[projectId] : undefined;
  }

  private load(file: string): void {
    const text = readFileSync(file, 'utf8');
    const fingerprint = createHash('sha256').update(text).digest('hex');
    // An unchanged (even if malformed) file is not parsed or logged again.
    if (fingerprint === this.fingerprint) return;
    this.fingerprint = fingerprint;
    this.content = parseRailSecrets(text);
    this.logger.info({ component: 'rail-secrets', projects: Object.keys(this.content.projects).length }, 'rail secrets loaded');
  }
}
