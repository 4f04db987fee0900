import { Injectable } from '@nestjs/common';
import { ApiError } from '#platform';
import { ProjectsRepository } from './projects.repository.js';

export interface ProjectCheck {
  /** Inside a transaction: hold the project's row (FOR NO KEY UPDATE) until it ends, serialising writers of the project's settings. */
  lock?: boolean;
}

/** "Does this project exist", for every context: the projects table belongs to this one. */
@Injectable()
export class ProjectDirectory {
  constructor(private readonly projects: ProjectsRepository) {}

  exists(projectId: string, check: ProjectCheck = {}): Promise<boolean> {
    return this.projects.projectExists(projectId, check.lock ?? false);
  }

  /** 404 resource_missing unless the project exists. */
  async assertExists(projectId: string, check: ProjectCheck = {}): Promise<void> {
    if (!(await this.exists(projectId, check))) throw ApiError.resourceMissing(`No such project: ${projectId}`);
  }
}
