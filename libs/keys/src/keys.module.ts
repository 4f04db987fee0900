import { Module } from '@nestjs/common';
import { ApiKeyGuard } from './auth/api-key.guard.js';
import { KeyLookupService } from './auth/key-lookup.service.js';
import { AppConfigController } from './config/app-config.controller.js';
import { AppConfigService } from './config/app-config.service.js';
import { KeysRepository } from './domain/keys.repository.js';
import { HeartbeatController } from './heartbeat/heartbeat.controller.js';
import { HeartbeatService } from './heartbeat/heartbeat.service.js';
import { OriginLearningService } from './heartbeat/origin-learning.service.js';
import { DemoSeeder } from './operator/demo-seeder.service.js';
import { KeysAdminController } from './operator/keys-admin.controller.js';
import { KeysAdminService } from './operator/keys-admin.service.js';
import { ProjectRateLimits } from './rate-limits/project-rate-limits.service.js';

/** Projects, apps and API keys; the key guard; app config and heartbeat. */
@Module({
  controllers: [KeysAdminController, AppConfigController, HeartbeatController],
  providers: [
    KeysRepository,
    KeyLookupService,
    OriginLearningService,
    ApiKeyGuard,
    ProjectRateLimits,
    KeysAdminService,
    AppConfigService,
    HeartbeatService,
    DemoSeeder,
  ],
  exports: [ApiKeyGuard, KeyLookupService, OriginLearningService, ProjectRateLimits, DemoSeeder],
})
export class KeysModule {}
