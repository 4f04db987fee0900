import { Injectable } from '@nestjs/common';
import { type TenantScope, Sql } from '#platform';

export interface MigratedUserWrite {
  developerUserId: string;
  customerId: string;
  displayName: string | null;
}

/** SQL of `migrated_users`. Every method takes the tenant scope first; writes run in the caller's (ambient) transaction. */
@Injectable()
export class MigratedUsersRepository {
  constructor(private readonly sql: Sql) {}

  /** Insert or update in one statement (developer id order); a displayName left out keeps the stored one. */
  async upsert(scope: TenantScope, users: readonly MigratedUserWrite[], now: Date): Promise<void> {
    if (users.length === 0) return;
    const sorted = [...users].sort((a, b) => (a.developerUserId < b.developerUserId ? -1 : a.developerUserId > b.developerUserId ? 1 : 0));
    await this.sql.run(
      `INSERT INTO migrated_users (project_id, env, developer_user_id, customer_id, display_name, created_at, updated_at)
       SELECT $1, $2, u.developer_user_id, u.customer_id, u.display_name, $6, $6
         FROM unnest($3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS u(developer_user_id, customer_id, display_name, ord)
        ORDER BY u.ord
       ON CONFLICT ON CONSTRAINT migrated_users_pk DO UPDATE
          SET customer_id = EXCLUDED.customer_id,
              display_name = COALESCE(EXCLUDED.display_name, migrated_users.display_name),
              updated_at = EXCLUDED.updated_at`,
      [scope.projectId, scope.env, sorted.map((u) => u.developerUserId), sorted.map((u) => u.customerId), sorted.map((u) => u.displayName), now],
    );
  }

  /** The erasure of a forgotten customer: its rows, and rows of its developer ids. */
  async erase(scope: TenantScope, customerId: string, developerUserIds: readonly string[]): Promise<void> {
    await this.sql.run(`DELETE FROM migrated_users WHERE project_id = $1 AND env = $2 AND (customer_id = $3 OR developer_user_id = ANY($4::text[]))`, [
      scope.projectId,
      scope.env,
      customerId,
      developerUserIds,
    ]);
  }
}
