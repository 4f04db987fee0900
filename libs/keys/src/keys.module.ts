import { Module, type OnModuleInit } from '@nestjs/common';
import { RoutePolicyHooks } from '#platform';
import { ApiKeyAuthenticator } from './auth/api-key.authenticator.js';
import { KeyLookupService } from './auth/key-lookup.service.js';
import { AppConfigController } from './config/app-config.controller.js';
import { AppConfigService } from './config/app-config.service.js';
import { KeysRepository } from './domain/keys.repository.js';
import { ProjectsRepository } from './domain/projects.repository.js';
import { ProjectDirectory } from './domain/project-directory.service.js';
import { HeartbeatController } from './heartbeat/heartbeat.controller.js';
import { HeartbeatService } from './heartbeat/heartbeat.service.js';
import { SdkLivenessRepository } from './heartbeat/sdk-liveness.repository.js';
import { OriginLearningService } from './heartbeat/origin-learning.service.js';
import { DemoSeedRepository } from './operator/demo-seed.repository.js';
import { DemoSeeder } from './operator/demo-seeder.service.js';
import { KeysAdminController } from './operator/keys-admin.controller.js';
import { KeysOperatorReadsController } from './operator/operator-reads.controller.js';
import { KeysOperatorReads } from './operator/operator-reads.service.js';
import { KeyLifecycleService } from './operator/key-lifecycle.service.js';
import { ProjectsAdminService } from './operator/projects-admin.service.js';
import { RateLimitsAdminService } from './operator/rate-limits-admin.service.js';
import { ProjectRateLimitsRepository } from './rate-limits/project-rate-limits.repository.js';
import { ProjectRateLimits } from './rate-limits/project-rate-limits.service.js';

/** Projects, apps and API keys; the API-key policy of the route guard; app config and heartbeat. */
import { WorkspacesAdminController } from './workspaces/workspaces-admin.controller.js';
import { WorkspacesAdminService } from './workspaces/workspaces-admin.service.js';
import { WorkspaceDirectory } from './workspaces/workspace-directory.service.js';
import { WorkspaceKeyIssuer } from './workspaces/workspace-key-issuer.service.js';
import { WorkspacesRepository } from './workspaces/workspaces.repository.js';
@Module({
  controllers: [KeysAdminController, KeysOperatorReadsController, AppConfigController, HeartbeatController, WorkspacesAdminController],
  providers: [
    WorkspacesRepository,
    WorkspacesAdminService,
    KeysOperatorReads,
    WorkspaceDirectory,
    WorkspaceKeyIssuer,
    KeysRepository,
    ProjectsRepository,
    ProjectDirectory,
    KeyLookupService,
    OriginLearningService,
    ApiKeyAuthenticator,
    ProjectRateLimits,
    ProjectRateLimitsRepository,
    ProjectsAdminService,
    KeyLifecycleService,
    RateLimitsAdminService,
    AppConfigService,
    HeartbeatService,
    SdkLivenessRepository,
    DemoSeeder,
    DemoSeedRepository,
  ],
  exports: [KeyLookupService, OriginLearningService, ProjectRateLimits, DemoSeeder, ProjectDirectory, WorkspaceDirectory, WorkspaceKeyIssuer],
})
export class KeysModule implements OnModuleInit {
  constructor(
    private readonly hooks: RoutePolicyHooks,
    private readonly authenticator: ApiKeyAuthenticator,
    private readonly rateLimits: ProjectRateLimits,
  ) {}

  onModuleInit(): void {
    this.hooks.registerApiKeyAuthenticator((policy, req, res) => this.authenticator.authenticate(policy, req, res));
    this.hooks.registerBucketRules((projectId) => this.rateLimits.table(projectId));
    this.hooks.registerUnknownRouteOriginCheck((req) => this.authenticator.originAllowedByPresentedKey(req));
  }
}
