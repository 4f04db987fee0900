import { Injectable } from '@nestjs/common';
import { type TenantScope, Sql, prepared } from '#platform';

export interface DeviceBinding {
  anonymousId: string;
  customerId: string;
  userId: string;
  verifiedAt: Date;
}

/** The binding of a device of the scope ($1 project, $2 env, $3 anonymous id); uses device_bindings_pk. */
export const FIND_DEVICE_BINDING_SQL = `SELECT anonymous_id, customer_id, user_id, verified_at
     FROM device_bindings
    WHERE project_id = $1 AND env = $2 AND anonymous_id = $3`;

const FIND_DEVICE_BINDING = prepared(FIND_DEVICE_BINDING_SQL);

/**
 * Device bindings. A binding may name a customer forgotten since: whether the customer is
 * still active is identity's answer (CustomerDirectory), asked by the caller. Every method
 * takes the tenant scope first.
 */
@Injectable()
export class DeviceBindingRepository {
  constructor(private readonly sql: Sql) {}

  /** Uses device_bindings_pk. */
  async find(scope: TenantScope, anonymousId: string): Promise<DeviceBinding | null> {
    const rows: { anonymous_id: string; customer_id: string; user_id: string; verified_at: Date }[] = await this.sql.rows(FIND_DEVICE_BINDING, [
      scope.projectId,
      scope.env,
      anonymousId,
    ]);
    const row = rows[0];
    return row ? { anonymousId: row.anonymous_id, customerId: row.customer_id, userId: row.user_id, verifiedAt: new Date(row.verified_at) } : null;
  }

  /** Records (or moves) the device's binding to the verified customer, now. */
  async record(scope: TenantScope, binding: DeviceBinding): Promise<void> {
    await this.sql.run(
      `INSERT INTO device_bindings (project_id, env, anonymous_id, customer_id, user_id, verified_at, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $6, $6)
       ON CONFLICT (project_id, env, anonymous_id) DO UPDATE
         SET customer_id = EXCLUDED.customer_id, user_id = EXCLUDED.user_id,
             verified_at = EXCLUDED.verified_at, updated_at = EXCLUDED.updated_at`,
      [scope.projectId, scope.env, binding.anonymousId, binding.customerId, binding.userId, binding.verifiedAt],
    );
  }

  /**
   * Erasure: the customer's bindings, or only those of the listed devices when deviceOnly.
   * A device re-identified as another customer meanwhile keeps that customer's binding.
   */
  async erase(scope: TenantScope, customerId: string, anonymousIds: string[], deviceOnly: boolean): Promise<void> {
    await this.sql.run(
      `DELETE FROM device_bindings
        WHERE project_id = $1 AND env = $2 AND customer_id = $3 AND (NOT $5::boolean OR anonymous_id = ANY($4::text[]))`,
      [scope.projectId, scope.env, customerId, anonymousIds, deviceOnly],
    );
  }
}
