import { Inject, Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { ApiError } from '../../../platform/src/index.js';

/** Existence checks of operator paths (`projects` belongs to the keys context; read-only here). */
@Injectable()
export class ProjectLookup {
  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

  /** 404 resource_missing unless the project exists. With `lock`, serialises writers of the project's catalogue. */
  async assertExists(projectId: string, manager: EntityManager = this.dataSource.manager, lock = false): Promise<void> {
    const rows: unknown[] = await manager.query(`SELECT id FROM projects WHERE id = $1${lock ? ' FOR NO KEY UPDATE' : ''}`, [projectId]);
    if (rows.length === 0) throw ApiError.resourceMissing(`No such project: ${projectId}`);
  }
}
