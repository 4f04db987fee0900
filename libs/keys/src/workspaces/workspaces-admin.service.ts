import { Injectable } from '@nestjs/common';
import { ApiError, Clock } from '#platform';
import { AGGREGATE_SCOPES } from '../auth/auth-context.js';
import { KeyLookupService } from '../auth/key-lookup.service.js';
import { last4, mintWorkspaceKey, newId, sha256Hex } from '../domain/api-key-format.js';
import { ProjectsRepository } from '../domain/projects.repository.js';
import type { CreateWorkspaceKeyDto, WorkspaceKeyView, WorkspaceView } from './workspaces.dto.js';
import { type WorkspaceKeyRow, WorkspacesRepository } from './workspaces.repository.js';

/** Use cases of the operator API for workspaces and their keys (hash-only, shown once, revocable). */
@Injectable()
export class WorkspacesAdminService {
  constructor(
    private readonly workspaces: WorkspacesRepository,
    private readonly projects: ProjectsRepository,
    private readonly lookup: KeyLookupService,
    private readonly clock: Clock,
  ) {}

  async createWorkspace(name: string): Promise<WorkspaceView> {
    const id = newId('ws');
    await this.workspaces.insertWorkspace({ id, name, createdAt: this.clock.now() });
    return { object: 'workspace', id, name, projects: [] };
  }

  async addProject(projectId: string, workspaceId: string): Promise<WorkspaceView> {
    const workspace = await this.requireWorkspace(workspaceId);
    const project = await this.projects.findProject(projectId);
    if (!project) throw ApiError.resourceMissing(`No project ${projectId}`);
    // No key reaches an archived project: its own keys answer 401, so a workspace may not read it either.
    if (project.archivedAt) throw ApiError.invalidParam(`Project ${projectId} is archived and cannot be added to a workspace`);
    await this.workspaces.addProject(projectId, workspaceId, this.clock.now());
    // A cached workspace key lists its projects: the new one is readable at once on this replica.
    this.lookup.invalidateAll();
    return { object: 'workspace', id: workspace.id, name: workspace.name, projects: await this.workspaces.projectIds(workspaceId) };
  }

  async createKey(workspaceId: string, dto: CreateWorkspaceKeyDto): Promise<WorkspaceKeyView> {
    await this.requireWorkspace(workspaceId);
    const key = mintWorkspaceKey();
    const row: WorkspaceKeyRow = {
      id: newId('key'),
      workspaceId,
      name: dto.name ?? null,
      last4: last4(key),
      scopes: [...new Set(dto.scopes ?? AGGREGATE_SCOPES)],
      status: 'active',
      createdAt: this.clock.now(),
    };
    await this.workspaces.insertKey({ ...row, secretHash: sha256Hex(key) });
    return { ...keyView(row), key };
  }

  async revokeKey(keyId: string): Promise<WorkspaceKeyView> {
    const row = await this.workspaces.revokeKey(keyId, this.clock.now());
    if (!row) throw ApiError.resourceMissing(`No workspace key ${keyId}`);
    this.lookup.invalidateAll();
    return keyView(row);
  }

  private async requireWorkspace(workspaceId: string) {
    const workspace = await this.workspaces.findWorkspace(workspaceId);
    if (!workspace) throw ApiError.resourceMissing(`No workspace ${workspaceId}`);
    return workspace;
  }
}

function keyView(row: WorkspaceKeyRow): WorkspaceKeyView {
  return {
    object: 'workspace_key',
    id: row.id,
    workspaceId: row.workspaceId,
    name: row.name,
    last4: row.last4,
    scopes: row.scopes,
    status: row.status,
    createdAt: Math.floor(new Date(row.createdAt).getTime() / 1000),
  };
}
