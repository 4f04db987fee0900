import { Injectable } from '@nestjs/common';
import { Sql, type TenantScope } from '#platform';

export const EVENT_MERGE_HOOK_NAME = 'telemetry.events';

/**
 * The SQL of the merge hook (registered with the identity context's MergeHooks): when the
 * operator approves a merge review, the other customer's resolved hint sets and events are
 * attributed to the canonical customer, inside the approval's transaction. Hint sets first,
 * then events: the lock order of ingestion and of the resolver. Returns how many events moved.
 */
@Injectable()
export class EventMergeRepository {
  constructor(private readonly sql: Sql) {}

  async reattribute(scope: TenantScope, merge: { fromCustomerId: string; intoCustomerId: string }): Promise<number> {
    const params = [scope.projectId, scope.env, merge.fromCustomerId, merge.intoCustomerId];
    await this.sql.run(`UPDATE event_identity_hints SET customer_id = $4 WHERE project_id = $1 AND env = $2 AND customer_id = $3`, params);
    return this.sql.affected(`UPDATE events SET customer_id = $4 WHERE project_id = $1 AND env = $2 AND customer_id = $3`, params);
  }
}
