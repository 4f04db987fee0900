import type { TenantScope } from '#platform';
import type { MediumContext } from '../medium.js';
import { unique } from '../medium.js';

/** Telemetry for tests: the situations ingestion reaches only asynchronously or not at all, by name. */

type Db = Pick<MediumContext['dataSource'], 'query'>;

/** Factory: an event of the app already attributed to the customer (what identity resolution leaves behind, later); answers its id. */
export async function attributedEvent(
  db: Db,
  scope: TenantScope,
  event: { appId: string; customerId: string; timestampMs: number; name?: string },
): Promise<string> {
  const eventId = unique('ev');
  await db.query(
    `INSERT INTO events (project_id, env, event_id, client_day, app_id, name, timestamp_ms, received_at_ms, customer_id)
     VALUES ($1, $2, $3, current_date, $4, $5, $6, $6, $7)`,
    [scope.projectId, scope.env, eventId, event.appId, event.name ?? 'screen_view', event.timestampMs, event.customerId],
  );
  return eventId;
}

/**
 * Factory: a later delivery of the event (received `laterByMs` after the stored one, with this
 * name and these properties) was written first, as when its retry overtook it on another replica.
 */
export async function laterDeliveryWrittenFirst(
  db: Db,
  scope: TenantScope,
  eventId: string,
  later: { laterByMs: number; name: string; properties: Record<string, unknown> },
): Promise<void> {
  await db.query(
    `UPDATE events SET received_at_ms = received_at_ms + $4, name = $5, properties = $6::jsonb WHERE project_id = $1 AND env = $2 AND event_id = $3`,
    [scope.projectId, scope.env, eventId, later.laterByMs, later.name, JSON.stringify(later.properties)],
  );
}
