import type { EntityManager } from 'typeorm';
import { ApiError, runOn } from '#platform';

/** 404 resource_missing unless the project exists (`projects` belongs to the keys context; read-only here). */
export async function assertProjectExists(manager: EntityManager, projectId: string): Promise<void> {
  const { rows } = await runOn(manager, `SELECT id FROM projects WHERE id = $1`, [projectId]);
  if (rows.length === 0) throw ApiError.resourceMissing(`No such project: ${projectId}`);
}
