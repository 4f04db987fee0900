import { Injectable } from '@nestjs/common';
import { ApiError, TenantScopes } from '#platform';
import { type AuthContext, type CreateAppDto, type WorkspaceAppRow, WorkspaceDirectory, isValidAllowlistEntry } from '#keys';
import { CoverageRepository } from '../coverage.repository.js';
import type { ReadEnvelope } from '../read-envelope.js';
import { ReportingReads } from '../reporting-reads.service.js';
import type {
  CreateWorkspaceAppDto,
  CreateWorkspaceProjectDto,
  CreatedAppData,
  CreatedProjectData,
  WorkspaceAppItem,
  WorkspaceAppsData,
  WorkspaceCoverageData,
  WorkspaceProjectsData,
} from './workspace.dto.js';

/** The workspace reads and the CLI's project and app creation. */
@Injectable()
export class WorkspaceReadsService {
  constructor(
    private readonly reads: ReportingReads,
    private readonly directory: WorkspaceDirectory,
    private readonly coverage: CoverageRepository,
  ) {}

  projects(auth: AuthContext): Promise<ReadEnvelope<WorkspaceProjectsData>> {
    return this.reads.read(auth, 'workspace_projects', async () => {
      const rows = await this.directory.projects(auth);
      return { data: { projects: rows.map((p) => ({ project: p.id, id: p.id, name: p.name, platforms: p.platforms })) } };
    });
  }

  coverageOf(auth: AuthContext): Promise<ReadEnvelope<WorkspaceCoverageData>> {
    return this.reads.read(auth, 'workspace_coverage', async () => {
      const projects = [];
      for (const projectId of this.directory.readableProjectIds(auth)) {
        // The key verified this project (its own, or one of its workspace's) and chose the environment.
        const c = await this.coverage.coverage(TenantScopes.ofVerifiedKey(projectId, auth.env));
        projects.push({ project: projectId, coverage: c });
      }
      return { data: { projects } };
    });
  }

  apps(auth: AuthContext): Promise<ReadEnvelope<WorkspaceAppsData>> {
    return this.reads.read(auth, 'workspace_apps', async () => ({ data: { apps: (await this.directory.apps(auth)).map(appItem) } }));
  }

  createProject(auth: AuthContext, dto: CreateWorkspaceProjectDto): Promise<ReadEnvelope<CreatedProjectData>> {
    return this.reads.read(
      auth,
      'project',
      async () => {
        const project = await this.directory.createProject(auth, dto.name);
        return { data: { project: { project: project.id, id: project.id, name: project.name, businessModel: dto.businessModel ?? null } } };
      },
      null,
    );
  }

  createApp(auth: AuthContext, dto: CreateWorkspaceAppDto): Promise<ReadEnvelope<CreatedAppData>> {
    const origins = dto.allowedOrigins ?? (dto.platform === 'web' && dto.domain ? [`https://${dto.domain}`] : []);
    origins.forEach((origin, i) => {
      if (!isValidAllowlistEntry(origin)) throw ApiError.invalidParam(`allowedOrigins[${i}] must be an origin (scheme://host[:port]) or https://*.<domain>`);
    });
    const app: CreateAppDto = {
      name: dto.domain ?? `${dto.platform} app`,
      platform: dto.platform,
      bundleId: dto.bundleId,
      packageName: dto.packageName,
      allowedOrigins: origins,
    };
    return this.reads.read(auth, 'app', async () => ({ data: { app: appItem(await this.directory.createApp(auth, dto.projectId, app)) } }), dto.projectId);
  }
}

function appItem(a: WorkspaceAppRow): WorkspaceAppItem {
  return {
    appId: a.appId,
    project: a.projectId,
    platform: a.platform,
    publishableKeyLive: a.publishableKeyLive,
    publishableKeyTest: a.publishableKeyTest,
    allowedOrigins: a.allowedOrigins,
  };
}
