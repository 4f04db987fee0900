import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { APP_LOGGER, type AppLogger } from '../logging/logger.js';
import { SchemaGate } from './schema-gate.service.js';

interface ScheduledJob {
  timer: NodeJS.Timeout | undefined;
  inFlight: Promise<void> | undefined;
}

/**
 * In-process background jobs (retention, erasure, resolvers, partition maintenance). A job
 * never overlaps itself on one replica (cross-replica exclusion is the job's own business:
 * advisory locks, SKIP LOCKED); failures are logged and the next tick tries again. Jobs do
 * not run under NODE_ENV=test, where tests call the work directly with the test clock, nor on
 * a replica started with BACKGROUND_JOBS=disabled (an API replica beside job runners), and
 * start only once the schema is at this build's head migration (SchemaGate).
 * On shutdown the timers stop and in-flight runs finish before the pools close.
 */
@Injectable()
export class PeriodicJobs implements OnModuleDestroy {
  private readonly jobs = new Set<ScheduledJob>();
  private stopped = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
    private readonly schema: SchemaGate,
  ) {}

  /** Whether this replica runs background work at all (not under NODE_ENV=test, not with BACKGROUND_JOBS=disabled). */
  get runs(): boolean {
    return this.config.nodeEnv !== 'test' && this.config.backgroundJobs;
  }

  every(name: string, intervalMs: number, work: () => Promise<void>, options: { runAtStart?: boolean } = {}): void {
    if (!this.runs || this.stopped) return;
    const job: ScheduledJob = { timer: undefined, inFlight: undefined };
    const tick = () => {
      if (job.inFlight || this.stopped) return;
      job.inFlight = work()
        .catch((err: Error) => this.logger.error({ job: name, err: { name: err.name, message: err.message } }, 'periodic job failed'))
        .finally(() => {
          job.inFlight = undefined;
        });
    };
    this.jobs.add(job);
    void this.schema.whenCurrent().then((current) => {
      if (!current || this.stopped) return;
      job.timer = setInterval(tick, intervalMs);
      job.timer.unref();
      if (options.runAtStart) setImmediate(tick);
    });
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    for (const job of this.jobs) clearInterval(job.timer);
    await Promise.all([...this.jobs].map((job) => job.inFlight));
  }
}
