import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ApiError } from '#platform';
import { CatalogRepository } from './catalog.repository.js';

/** Existence checks of operator paths (`projects` belongs to the keys context; read-only here). */
@Injectable()
export class ProjectLookup {
  constructor(private readonly catalog: CatalogRepository) {}

  /** 404 resource_missing unless the project exists. With `lock`, serialises writers of the project's catalogue. */
  async assertExists(projectId: string, manager?: EntityManager, lock = false): Promise<void> {
    if (!(await this.catalog.projectExists(projectId, lock, manager))) throw ApiError.resourceMissing(`No such project: ${projectId}`);
  }
}
