import type { TenantScope } from '#platform';
import { MAX_ATTEMPTS } from '#webhooks';
import { WebhookEndpointsService } from '../../../libs/webhooks/src/endpoints/webhook-endpoints.service.js';
import type { MediumContext } from '../medium.js';
import { unique } from '../medium.js';

/**
 * Webhook endpoints and deliveries for the medium layer. What the operator API can do goes
 * through the endpoints service (audited, checked like a request); what it cannot (backdating
 * an endpoint, forcing a delivery's state or lease) is written directly, each under a name that
 * says which situation it stands for.
 */

/** Configuration a medium context needs to register endpoints on loopback addresses. */
export const WEBHOOK_MEDIUM_ENV = {
  WEBHOOKS_ALLOW_PRIVATE: 'true',
  WEBHOOK_SIGNING_KEY: 'medium-signing-key-0123456789abcdef0123456789',
} as const;

type Db = Pick<MediumContext['dataSource'], 'query'>;

export interface EndpointOptions {
  url?: string;
  eventTypes?: string[];
}

/** Factory: an enabled endpoint of the scope, registered through the endpoints service (the context needs WEBHOOK_MEDIUM_ENV); answers its id. */
export async function newEndpoint(m: MediumContext, scope: TenantScope, options: EndpointOptions = {}): Promise<string> {
  const created = await m
    .get(WebhookEndpointsService)
    .create(scope.projectId, { url: options.url ?? 'http://127.0.0.1:9/hook', env: scope.env, eventTypes: options.eventTypes }, unique('req_medium'));
  return created.id;
}

/** Factory: `count` enabled endpoints of the scope. */
export async function newEndpoints(m: MediumContext, scope: TenantScope, count: number, options: EndpointOptions = {}): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push(await newEndpoint(m, scope, options));
  return ids;
}

/** Through the service, as `PATCH status`. */
export const disableEndpoint = async (m: MediumContext, endpointId: string): Promise<void> => {
  await m.get(WebhookEndpointsService).patch(endpointId, { status: 'disabled' }, unique('req_medium'));
};
export const enableEndpoint = async (m: MediumContext, endpointId: string): Promise<void> => {
  await m.get(WebhookEndpointsService).patch(endpointId, { status: 'enabled' }, unique('req_medium'));
};
export const deleteEndpoint = async (m: MediumContext, endpointId: string): Promise<void> => {
  await m.get(WebhookEndpointsService).delete(endpointId, unique('req_medium'));
};

/** Factory: the endpoint became enabled `seconds` ago (by the database's clock), as if it had been enabled long before the test. */
export async function backdateEndpointEnabled(db: Db, endpointId: string, seconds: number): Promise<void> {
  await db.query(`UPDATE webhook_endpoints SET enabled_at = clock_timestamp() - make_interval(secs => $2) WHERE id = $1`, [endpointId, seconds]);
}

/** Factory: an enabled endpoint of the scope, enabled `seconds` ago. */
export async function endpointEnabledSince(m: MediumContext, scope: TenantScope, seconds: number): Promise<string> {
  const id = await newEndpoint(m, scope);
  await backdateEndpointEnabled(m.dataSource, id, seconds);
  return id;
}

/** Factory: a replica of a previous release numbered an update of the customer without keeping the set it announced. */
export async function numberedWithoutKeptSet(db: Db, scope: TenantScope, customerId: string): Promise<void> {
  await db.query(`UPDATE webhook_customer_sequences SET last_sequence = last_sequence + 1 WHERE project_id = $1 AND env = $2 AND customer_id = $3`, [
    scope.projectId,
    scope.env,
    customerId,
  ]);
}

/** Factory: the delivery failed every attempt the schedule allows and is dead (the schedule itself is the dispatch-rules medium spec's). */
export async function deliveryDeadAfterAllAttempts(db: Db, deliveryId: string): Promise<void> {
  await db.query(
    `UPDATE webhook_deliveries SET status = 'dead', attempts = $2, next_attempt_at_ms = NULL, leased_by = NULL, leased_until_ms = NULL WHERE id = $1`,
    [deliveryId, MAX_ATTEMPTS],
  );
}
