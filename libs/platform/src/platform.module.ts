import { DynamicModule, Global, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { APP_CONFIG, type AppConfig } from './config/app-config.js';
import { Clock } from './clock/clock.js';
import { APP_LOGGER, type AppLogger } from './logging/logger.js';
import { AllExceptionsFilter } from './errors/all-exceptions.filter.js';
import { createValidationPipe } from './http/validation.js';
import { RateLimiterService } from './rate-limit/rate-limiter.service.js';
import { SDK_VERSIONS_MANIFEST, SdkVersionPolicy } from './sdk/sdk-version-policy.js';
import type { SdkVersionsManifest } from './sdk/sdk-versions.js';
import { HealthController } from './health/health.controller.js';
import { ReadinessController } from './health/readiness.controller.js';
import { Readiness } from './health/readiness.js';
import { SchemaGate } from './jobs/schema-gate.service.js';
import { Metrics } from './metrics/metrics.js';
import { SdkVersionsController } from './sdk/sdk-versions.controller.js';
import { TestClockController, TestClockEnabledGuard } from './operator/test-clock.controller.js';
import { DatabaseModule } from './database/database.module.js';
import { PeriodicJobs } from './jobs/periodic-jobs.service.js';
import type { DatabaseSchema } from './database/data-source-options.js';
import { Sql } from './database/sql.js';
import { IdempotencyRepository } from './idempotency/idempotency.repository.js';
import { IdempotencyService } from './idempotency/idempotency.service.js';
import { RoutePolicyGuard } from './policy/route-policy.guard.js';
import { RoutePolicyHooks } from './policy/route-policy.hooks.js';
import { RouteRateLimits } from './policy/route-rate-limit.js';
import { RouteAdmission } from './policy/route-admission.js';
import { ConsoleSessions } from './policy/console-sessions.service.js';
import { ConsoleSessionRevocationsRepository } from './policy/console-session-revocations.repository.js';
import { OperatorAuthenticator } from './policy/operator-authenticator.js';
import { DiscoveryModule } from '@nestjs/core';
import { JobsRepository } from './jobs/jobs.repository.js';
import { JobQueue } from './jobs/job-queue.service.js';
import { JobWorker } from './jobs/job-worker.service.js';
import { JobsAdminController } from './jobs/jobs-admin.controller.js';

export interface PlatformOptions {
  config: AppConfig;
  logger: AppLogger;
  sdkVersions: SdkVersionsManifest;
  schema: DatabaseSchema;
}

/** What every context uses: config, clock, logger, database, rate limiter, errors, validation. */
@Global()
@Module({})
export class PlatformModule {
  static forRoot(options: PlatformOptions): DynamicModule {
    return {
      module: PlatformModule,
      imports: [DatabaseModule.forRoot(options.schema), DiscoveryModule],
      controllers: [HealthController, SdkVersionsController, TestClockController, JobsAdminController, ReadinessController],
      providers: [
        { provide: APP_CONFIG, useValue: options.config },
        { provide: APP_LOGGER, useValue: options.logger },
        { provide: SDK_VERSIONS_MANIFEST, useValue: options.sdkVersions },
        // One instance, also the fast paths' filter (its unreachable-database log is throttled per instance).
        AllExceptionsFilter,
        { provide: APP_FILTER, useExisting: AllExceptionsFilter },
        { provide: APP_PIPE, useFactory: createValidationPipe },
        { provide: APP_GUARD, useClass: RoutePolicyGuard },
        Clock,
        Sql,
        RoutePolicyHooks,
        RouteAdmission,
        RouteRateLimits,
        ConsoleSessionRevocationsRepository,
        ConsoleSessions,
        OperatorAuthenticator,
        IdempotencyRepository,
        IdempotencyService,
        JobsRepository,
        JobQueue,
        JobWorker,
        RateLimiterService,
        SdkVersionPolicy,
        TestClockEnabledGuard,
        PeriodicJobs,
        SchemaGate,
        Readiness,
        Metrics,
      ],
      exports: [
        APP_CONFIG,
        APP_LOGGER,
        SDK_VERSIONS_MANIFEST,
        Clock,
        Sql,
        RoutePolicyHooks,
        RouteRateLimits,
        ConsoleSessions,
        IdempotencyService,
        JobQueue,
        JobWorker,
        RateLimiterService,
        SdkVersionPolicy,
        PeriodicJobs,
        SchemaGate,
        DatabaseModule,
        Readiness,
        Metrics,
      ],
    };
  }
}
