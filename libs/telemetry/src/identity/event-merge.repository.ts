import type { EntityManager } from 'typeorm';
import { type TenantScope, runOn } from '#platform';

export const EVENT_MERGE_HOOK_NAME = 'telemetry.events';

/**
 * The SQL of the merge hook (registered with the identity context's MergeHooks): when the
 * operator approves a merge review, the other customer's resolved hint sets and events are
 * attributed to the canonical customer, inside the approval's transaction. Hint sets first,
 * then events: the lock order of ingestion and of the resolver. Returns how many events moved.
 */
export async function reattributeCustomerEvents(
  scope: TenantScope,
  merge: { fromCustomerId: string; intoCustomerId: string },
  manager: EntityManager,
): Promise<number> {
  const params = [scope.projectId, scope.env, merge.fromCustomerId, merge.intoCustomerId];
  await runOn(manager, `UPDATE event_identity_hints SET customer_id = $4 WHERE project_id = $1 AND env = $2 AND customer_id = $3`, params);
  return (await runOn(manager, `UPDATE events SET customer_id = $4 WHERE project_id = $1 AND env = $2 AND customer_id = $3`, params)).affected;
}
