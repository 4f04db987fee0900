import { DynamicModule, Global, Module } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { APP_CONFIG, type AppConfig } from './config/app-config.js';
import { Clock } from './clock/clock.js';
import { APP_LOGGER, type AppLogger } from './logging/logger.js';
import { AllExceptionsFilter } from './errors/all-exceptions.filter.js';
import { createValidationPipe } from './http/validation.js';
import { RateLimiterService } from './rate-limit/rate-limiter.service.js';
import { SDK_VERSIONS_MANIFEST, SdkVersionPolicy } from './sdk/sdk-version-policy.js';
import type { SdkVersionsManifest } from './sdk/sdk-versions.js';
import { HealthController } from './health/health.controller.js';
import { SdkVersionsController } from './sdk/sdk-versions.controller.js';
import { TestClockController, TestClockEnabledGuard } from './operator/test-clock.controller.js';
import { DatabaseModule } from './database/database.module.js';
import { PeriodicJobs } from './jobs/periodic-jobs.service.js';
import type { DatabaseSchema } from './database/data-source-options.js';

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
      imports: [DatabaseModule.forRoot(options.schema)],
      controllers: [HealthController, SdkVersionsController, TestClockController],
      providers: [
        { provide: APP_CONFIG, useValue: options.config },
        { provide: APP_LOGGER, useValue: options.logger },
        { provide: SDK_VERSIONS_MANIFEST, useValue: options.sdkVersions },
        { provide: APP_FILTER, useClass: AllExceptionsFilter },
        { provide: APP_PIPE, useFactory: createValidationPipe },
        Clock,
        RateLimiterService,
        SdkVersionPolicy,
        TestClockEnabledGuard,
        PeriodicJobs,
      ],
      exports: [APP_CONFIG, APP_LOGGER, SDK_VERSIONS_MANIFEST, Clock, RateLimiterService, SdkVersionPolicy, PeriodicJobs, DatabaseModule],
    };
  }
}
