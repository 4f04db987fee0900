import { Injectable } from '@nestjs/common';
import { ApiError, Clock } from '#platform';
import { KeysRepository } from '../domain/keys.repository.js';
import { ProjectsRepository } from '../domain/projects.repository.js';
import { WorkspacesRepository } from '../workspaces/workspaces.repository.js';
import { appView, projectView, toSeconds } from './keys-admin.views.js';
import type { AppList, ProjectList, WorkspaceKeyList, WorkspaceList } from './operator-reads.views.js';

const APPS_LIMIT = 200;
const WORKSPACES_LIMIT = 200;
const WORKSPACE_KEYS_LIMIT = 500;

/** The console's list reads of projects, apps, workspaces and workspace keys (each one bounded query). */
@Injectable()
export class KeysOperatorReads {
  constructor(
    private readonly projects: ProjectsRepository,
    private readonly keys: KeysRepository,
    private readonly workspaces: WorkspacesRepository,
    private readonly clock: Clock,
  ) {}

  async listProjects(limit: number, startingAfter: string | undefined): Promise<ProjectList> {
    let cursor = null;
    if (startingAfter !== undefined) {
      cursor = await this.projects.findProject(startingAfter);
      if (!cursor) throw ApiError.invalidParam(`startingAfter: no project ${startingAfter}`);
    }
    const rows = await this.projects.listProjects(limit + 1, cursor);
    return { object: 'list', data: rows.slice(0, limit).map(projectView), hasMore: rows.length > limit };
  }

  async listApps(projectId: string): Promise<AppList> {
    if (!(await this.projects.findProject(projectId))) throw ApiError.resourceMissing(`No project ${projectId}`);
    const apps = await this.projects.listAppsOfProject(projectId, APPS_LIMIT);
    const keys = await this.keys.listKeysOfApps(
      projectId,
      apps.map((a) => a.id),
    );
    const nowMs = this.clock.nowMs();
    return {
      object: 'list',
      data: apps.map((app) =>
        appView(
          app,
          keys.filter((k) => k.appId === app.id),
          nowMs,
        ),
      ),
    };
  }

  async listWorkspaces(): Promise<WorkspaceList> {
    const rows = await this.workspaces.listWorkspaces(WORKSPACES_LIMIT);
    return {
      object: 'list',
      data: rows.map((w) => ({ object: 'workspace', id: w.id, name: w.name, projects: w.projects, createdAt: toSeconds(w.createdAt) })),
    };
  }

  async listWorkspaceKeys(workspaceId: string): Promise<WorkspaceKeyList> {
    if (!(await this.workspaces.findWorkspace(workspaceId))) throw ApiError.resourceMissing(`No workspace ${workspaceId}`);
    const rows = await this.workspaces.listKeys(workspaceId, WORKSPACE_KEYS_LIMIT);
    return {
      object: 'list',
      data: rows.map((row) => ({
        object: 'workspace_key',
        id: row.id,
        workspaceId: row.workspaceId,
        name: row.name,
        last4: row.last4,
        scopes: row.scopes,
        status: row.status,
        createdAt: toSeconds(row.createdAt),
      })),
    };
  }
}
