import { Injectable } from '@nestjs/common';
import { ApiError, Clock, Sql } from '#platform';
import { KeyLookupService } from '../auth/key-lookup.service.js';
import { newId } from '../domain/api-key-format.js';
import { KeysRepository } from '../domain/keys.repository.js';
import { type AppRow, type ProjectRow, ProjectsRepository } from '../domain/projects.repository.js';
import { KeyLifecycleService } from './key-lifecycle.service.js';
import { appView, projectView } from './keys-admin.views.js';
import type { AppView, CreateAppDto, PatchAppDto, ProjectView } from './operator.dto.js';

const NON_NULLABLE_APP_FIELDS = ['name', 'allowedOrigins', 'bundleId', 'packageName', 'sdkDeprecatedVersions', 'errorNoiseDenyList'] as const;

/** Use cases of the operator API for projects and apps (a new app's keys are minted by KeyLifecycleService). */
@Injectable()
export class ProjectsAdminService {
  constructor(
    private readonly projects: ProjectsRepository,
    private readonly keys: KeysRepository,
    private readonly keyLifecycle: KeyLifecycleService,
    private readonly lookup: KeyLookupService,
    private readonly sql: Sql,
    private readonly clock: Clock,
  ) {}

  async createProject(name: string): Promise<ProjectView> {
    const project: ProjectRow = { id: newId('proj'), name, archivedAt: null, createdAt: this.clock.now() };
    await this.projects.insertProject(project);
    return projectView(project);
  }

  async getProject(projectId: string): Promise<ProjectView> {
    return projectView(await this.requireProject(projectId));
  }

  async archiveProject(projectId: string): Promise<ProjectView> {
    const project = await this.projects.archiveProject(projectId, this.clock.now());
    if (!project) throw ApiError.resourceMissing(`No project ${projectId}`);
    this.lookup.invalidateAll();
    return projectView(project);
  }

  /** Creates the app and mints its four keys (publishable and secret, sandbox and production). */
  async createApp(projectId: string, dto: CreateAppDto, requestId: string): Promise<AppView> {
    const project = await this.requireProject(projectId);
    if (project.archivedAt) throw ApiError.invalidParam(`Project ${projectId} is archived`);
    const now = this.clock.now();
    const app: AppRow = {
      id: newId('app'),
      projectId,
      name: dto.name,
      platform: dto.platform,
      bundleId: dto.bundleId ?? null,
      packageName: dto.packageName ?? null,
      allowedOrigins: dto.allowedOrigins ?? [],
      sdkMinVersion: null,
      sdkDeprecatedVersions: [],
      verifierConfig: { logVerifierResults: null, verifyContractsAtBoot: null },
      errorNoiseDenyList: { version: 1, patterns: [] },
      createdAt: now,
    };
    const plaintexts = await this.sql.transaction(async () => {
      await this.projects.insertApp(app);
      return this.keyLifecycle.mintAppKeys(app, requestId);
    });
    return appView(app, await this.keys.listKeysOfApp(app.id), this.clock.nowMs(), plaintexts);
  }

  async getApp(appId: string): Promise<AppView> {
    const app = await this.requireApp(appId);
    return appView(app, await this.keys.listKeysOfApp(appId), this.clock.nowMs());
  }

  async patchApp(appId: string, dto: PatchAppDto): Promise<AppView> {
    // An explicit null would store SQL or JSON null where authentication and /v1/config expect
    // a value (a null allowlist broke every request of the app). Only sdkMinVersion may be
    // reset with null (back to the manifest floor); a null verifierConfig changes nothing.
    for (const field of NON_NULLABLE_APP_FIELDS) {
      if ((dto as Record<string, unknown>)[field] === null) throw ApiError.invalidParam(`${field} cannot be null`);
    }
    const current = await this.requireApp(appId);
    if (dto.bundleId !== undefined && current.platform !== 'ios') throw ApiError.invalidParam('bundleId applies to ios apps only');
    if (dto.packageName !== undefined && current.platform !== 'android') throw ApiError.invalidParam('packageName applies to android apps only');
    const verifierConfig = dto.verifierConfig
      ? {
          logVerifierResults: dto.verifierConfig.logVerifierResults ?? null,
          verifyContractsAtBoot: dto.verifierConfig.verifyContractsAtBoot ?? null,
        }
      : undefined;
    const updated = await this.projects.updateApp(
      appId,
      {
        name: dto.name,
        allowedOrigins: dto.allowedOrigins,
        bundleId: dto.bundleId,
        packageName: dto.packageName,
        sdkMinVersion: dto.sdkMinVersion,
        sdkDeprecatedVersions: dto.sdkDeprecatedVersions,
        verifierConfig,
        errorNoiseDenyList: dto.errorNoiseDenyList,
      },
      this.clock.now(),
    );
    if (!updated) throw ApiError.resourceMissing(`No app ${appId}`);
    this.lookup.invalidateAll();
    return appView(updated, await this.keys.listKeysOfApp(appId), this.clock.nowMs());
  }

  private async requireProject(projectId: string): Promise<ProjectRow> {
    const project = await this.projects.findProject(projectId);
    if (!project) throw ApiError.resourceMissing(`No project ${projectId}`);
    return project;
  }

  private async requireApp(appId: string): Promise<AppRow> {
    const app = await this.projects.findApp(appId);
    if (!app) throw ApiError.resourceMissing(`No app ${appId}`);
    return app;
  }
}
