import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { Readiness } from '../health/readiness.js';
import { APP_LOGGER, type AppLogger } from '../logging/logger.js';

/** How often a replica waiting for the schema checks it again. */
export const SCHEMA_RECHECK_MS = 1_000;

/**
 * Background work (job workers, the webhook dispatcher, the events-buffer consumer) starts
 * only once the schema is at this build's head migration, the same check readiness makes:
 * a replica started before the migrations ran (MIGRATIONS_RUN=false while another replica or
 * the migrate init container applies them) waits quietly, re-checking every second, instead
 * of failing every poll against missing tables and spending durable jobs' attempts.
 */
@Injectable()
export class SchemaGate implements OnModuleDestroy {
  private opened: Promise<boolean> | undefined;
  private stopped = false;
  private wake: (() => void) | undefined;

  constructor(
    private readonly readiness: Readiness,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  /** Resolves true once the schema is at the head migration, false when the process stops first. */
  whenCurrent(): Promise<boolean> {
    this.opened ??= this.wait();
    return this.opened;
  }

  onModuleDestroy(): void {
    this.stopped = true;
    this.wake?.();
  }

  private async wait(): Promise<boolean> {
    let waiting = false;
    while (!this.stopped) {
      const current = await this.readiness.schemaAtHead().catch(() => false);
      if (current) {
        if (waiting) this.logger.info('schema at the head migration: starting background workers');
        return !this.stopped;
      }
      if (!waiting) {
        waiting = true;
        this.logger.info({ recheckMs: SCHEMA_RECHECK_MS }, "background workers wait for the schema to reach this build's head migration");
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, SCHEMA_RECHECK_MS);
        timer.unref();
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
    return false;
  }
}
