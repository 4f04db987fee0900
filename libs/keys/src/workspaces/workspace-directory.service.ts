import { Injectable } from '@nestjs/common';
import { ApiError, Clock } from '#platform';
import type { AuthContext } from '../auth/auth-context.js';
import { KeyLookupService } from '../auth/key-lookup.service.js';
import { ProjectsAdminService } from '../operator/projects-admin.service.js';
import type { CreateAppDto } from '../operator/operator.dto.js';
import { type WorkspaceAppRow, type WorkspaceProjectRow, WorkspacesRepository } from './workspaces.repository.js';

export type { WorkspaceAppRow, WorkspaceProjectRow };

/**
 * What the reads of other contexts need of workspaces: the projects a verified key may read,
 * their apps, and the CLI's project and app creation with a workspace key.
 */
@Injectable()
export class WorkspaceDirectory {
  constructor(
    private readonly workspaces: WorkspacesRepository,
    private readonly projectsAdmin: ProjectsAdminService,
    private readonly lookup: KeyLookupService,
    private readonly clock: Clock,
  ) {}

  /** The project ids the key reads: a workspace key's projects (or the one it named), a secret key's own. */
  readableProjectIds(auth: AuthContext): string[] {
    if (auth.kind !== 'workspace') return [auth.projectId];
    const all = auth.workspaceProjectIds ?? [];
    return all.includes(auth.projectId) ? [auth.projectId] : [...all];
  }

  async projects(auth: AuthContext): Promise<WorkspaceProjectRow[]> {
    if (auth.kind !== 'workspace') {
      const own = await this.workspaces.describeProject(auth.projectId);
      return own ? [own] : [];
    }
    const named = (auth.workspaceProjectIds ?? []).includes(auth.projectId) ? auth.projectId : undefined;
    return this.workspaces.listProjects(auth.workspaceId as string, named);
  }

  apps(auth: AuthContext): Promise<WorkspaceAppRow[]> {
    return this.workspaces.listApps(this.readableProjectIds(auth));
  }

  /** A new project in the key's workspace (workspace keys only). */
  async createProject(auth: AuthContext, name: string): Promise<{ id: string; name: string }> {
    const workspaceId = requireWorkspace(auth);
    const project = await this.projectsAdmin.createProject(name);
    await this.workspaces.addProject(project.id, workspaceId, this.clock.now());
    this.lookup.invalidateAll();
    return { id: project.id, name: project.name };
  }

  /** A new app (and its keys) in a project of the key's workspace. */
  async createApp(auth: AuthContext, projectId: string, dto: CreateAppDto): Promise<WorkspaceAppRow> {
    const workspaceId = requireWorkspace(auth);
    if (!(await this.workspaces.hasProject(projectId, workspaceId))) {
      throw ApiError.permission('project_not_allowed', `This API key cannot read project ${projectId}`);
    }
    const app = await this.projectsAdmin.createApp(projectId, dto, auth.requestId);
    const [row] = (await this.workspaces.listApps([projectId])).filter((a) => a.appId === app.id);
    return row;
  }
}

function requireWorkspace(auth: AuthContext): string {
  if (auth.kind !== 'workspace' || !auth.workspaceId) throw ApiError.authentication('invalid_api_key', 'A workspace key is required');
  return auth.workspaceId;
}
