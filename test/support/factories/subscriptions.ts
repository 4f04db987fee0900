import type { TenantScope } from '#platform';
import type { DataSource } from 'typeorm';

/**
 * Store states of rail subscriptions that no request can produce any more, written directly.
 * Each function names the situation a test needs; the rows are otherwise left as the rails wrote them.
 */

/** A record as it was applied before the lifecycle was stored: no subscription object, no lifecycle state. */
export async function dropStoredLifecycle(db: DataSource, scope: TenantScope, subscriptionId: string): Promise<void> {
  await db.query(`UPDATE rail_subscriptions SET subscription = NULL, lifecycle_state = NULL WHERE project_id = $1 AND env = $2 AND subscription_id = $3`, [
    scope.projectId,
    scope.env,
    subscriptionId,
  ]);
}
