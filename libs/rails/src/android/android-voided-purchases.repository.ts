import { Injectable } from '@nestjs/common';
import { type Env, Sql } from '#platform';

/** Where the service learned that a purchase was voided. */
export type VoidedSource = 'notification' | 'list';

/** A voided Android purchase token of a project: it never gives access again. */
export interface VoidedPurchase {
  purchaseToken: string;
  /** Null while no read or stored record told the environment. */
  env: Env | null;
  /** Unix ms. */
  voidedAtMs: number;
  orderId: string | null;
  /** Google's `voidedReason` (list entries); null for a notification. */
  voidedReason: number | null;
  voidedSource: VoidedSource;
}

interface VoidedRow {
  purchase_token: string;
  env: Env | null;
  voided_at_ms: string;
  order_id: string | null;
  voided_reason: number | null;
  voided_source: VoidedSource;
}

const toVoided = (row: VoidedRow): VoidedPurchase => ({
  purchaseToken: row.purchase_token,
  env: row.env,
  voidedAtMs: Number(row.voided_at_ms),
  orderId: row.order_id,
  voidedReason: row.voided_reason,
  voidedSource: row.voided_source,
});

const COLUMNS = `purchase_token, env, (extract(epoch FROM voided_at) * 1000)::bigint AS voided_at_ms, order_id, voided_reason, voided_source`;

/**
 * SQL of the voided Android purchases. Voided tokens are a project's (like rail notifications,
 * the environment is learned only after a read), so the scope is the project.
 */
@Injectable()
export class AndroidVoidedPurchasesRepository {
  constructor(private readonly sql: Sql) {}

  /**
   * Records a voided token; the first report wins. Returns the stored entry (the earlier one
   * when the token was already voided) and whether this call recorded it. The environment is
   * filled when it becomes known.
   */
  async record(project: { projectId: string }, entry: VoidedPurchase, recordedAtMs: number): Promise<{ voided: VoidedPurchase; recorded: boolean }> {
    const inserted = await this.sql.one<VoidedRow>(
      `INSERT INTO android_voided_purchases (project_id, purchase_token, env, voided_at, order_id, voided_reason, voided_source, recorded_at)
       VALUES ($1, $2, $3, to_timestamp($4::bigint / 1000.0), $5, $6, $7, to_timestamp($8::bigint / 1000.0))
       ON CONFLICT ON CONSTRAINT android_voided_purchases_pk DO NOTHING
       RETURNING ${COLUMNS}`,
      [project.projectId, entry.purchaseToken, entry.env, entry.voidedAtMs, entry.orderId, entry.voidedReason, entry.voidedSource, recordedAtMs],
    );
    if (inserted) return { voided: toVoided(inserted), recorded: true };
    const existing = await this.sql.one<VoidedRow>(
      `UPDATE android_voided_purchases SET env = COALESCE(env, $3), order_id = COALESCE(order_id, $4), voided_reason = COALESCE(voided_reason, $5)
        WHERE project_id = $1 AND purchase_token = $2
       RETURNING ${COLUMNS}`,
      [project.projectId, entry.purchaseToken, entry.env, entry.orderId, entry.voidedReason],
    );
    return { voided: toVoided(existing!), recorded: false };
  }

  async find(project: { projectId: string }, purchaseToken: string): Promise<VoidedPurchase | null> {
    const row = await this.sql.one<VoidedRow>(`SELECT ${COLUMNS} FROM android_voided_purchases WHERE project_id = $1 AND purchase_token = $2`, [
      project.projectId,
      purchaseToken,
    ]);
    return row ? toVoided(row) : null;
  }
}
