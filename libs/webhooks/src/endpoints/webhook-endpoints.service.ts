import { lookup } from 'node:dns/promises';
import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, ApiError, type AppConfig, Clock, type TenantScope, TenantScopes, crossTenant, randomLowerAlnum, Sql } from '#platform';
import { AuditJournal } from '#audit';
import { checkEndpointUrl, isPublicAddress } from '../domain/address-policy.js';
import { DELIVERY_STATUSES, type DeliveryStatus, MAX_ENDPOINTS_PER_ENV, PREVIOUS_SECRET_TTL_MS } from '../domain/webhook-rules.js';
import { type DeliveryRecord, WebhookOutboxRepository } from '../outbox/webhook-outbox.repository.js';
import { WebhookOutbox } from '../outbox/webhook-outbox.service.js';
import { EndpointPresence } from '../outbox/endpoint-presence.service.js';
import { type EndpointRecord, WebhookEndpointsRepository } from './webhook-endpoints.repository.js';
import { WebhookSecrets } from './webhook-secrets.service.js';
import type {
  CreateWebhookEndpointDto,
  PatchWebhookEndpointDto,
  WebhookDeliveryList,
  WebhookDeliveryView,
  WebhookEndpointDeleted,
  WebhookEndpointList,
  WebhookEndpointView,
} from './webhook.dto.js';

const LOOKUP = crossTenant('operator webhook lookups by id');
const seconds = (ms: number | null): number | null => (ms === null ? null : Math.floor(ms / 1000));

function endpointView(e: EndpointRecord): WebhookEndpointView {
  return {
    object: 'webhook_endpoint',
    id: e.id,
    projectId: e.projectId,
    env: e.env,
    url: e.url,
    eventTypes: e.eventTypes,
    description: e.description,
    status: e.status,
    createdAt: Math.floor(e.createdAtMs / 1000),
  };
}

export function deliveryView(d: DeliveryRecord): WebhookDeliveryView {
  return {
    object: 'webhook_delivery',
    id: d.id,
    endpointId: d.endpointId,
    eventId: d.eventId,
    eventType: d.eventType,
    status: d.status,
    attempts: d.attempts,
    lastStatusCode: d.lastStatusCode,
    lastError: d.lastError,
    nextAttemptAt: seconds(d.nextAttemptAtMs),
    createdAt: Math.floor(d.createdAtMs / 1000),
    succeededAt: seconds(d.succeededAtMs),
  };
}

/** The operator's webhook endpoints: registration with URL checks, secrets shown once, deliveries and retries; every write audited. */
@Injectable()
export class WebhookEndpointsService {
  private readonly allowPrivate: boolean;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly sql: Sql,
    private readonly clock: Clock,
    private readonly endpoints: WebhookEndpointsRepository,
    private readonly outbox: WebhookOutboxRepository,
    private readonly recorder: WebhookOutbox,
    private readonly secrets: WebhookSecrets,
    private readonly journal: AuditJournal,
    private readonly presence: EndpointPresence,
  ) {
    this.allowPrivate = config.webhooksAllowPrivate;
  }

  async create(projectId: string, body: CreateWebhookEndpointDto, requestId: string): Promise<WebhookEndpointView> {
    await this.assertUrl(body.url);
    const scope = TenantScopes.operator(projectId, body.env);
    const nowMs = this.clock.nowMs();
    const view = await this.sql.transaction(async () => {
      if (!(await this.endpoints.projectExists(projectId))) throw ApiError.resourceMissing(`No such project: ${projectId}`);
      const id = `we_${randomLowerAlnum(24)}`;
      const created = await this.endpoints.insertBounded(
        scope,
        { id, url: body.url, eventTypes: body.eventTypes ?? ['*'], description: body.description ?? null },
        MAX_ENDPOINTS_PER_ENV,
        nowMs,
      );
      if (!created) throw ApiError.invalidParam(`env: at most ${MAX_ENDPOINTS_PER_ENV} webhook endpoints per project and environment`);
      await this.audit(scope, 'webhook_endpoint.created', id, requestId, { url: body.url, eventTypes: created.eventTypes });
      return { ...endpointView(created), secret: this.secrets.secret(id, created.secretVersion) };
    });
    // Committed: the answer waits until no replica can still skip this scope's changes.
    await this.presence.enabled(scope);
    return view;
  }

  async list(projectId: string, env?: string): Promise<WebhookEndpointList> {
    if (env !== undefined && env !== 'sandbox' && env !== 'production') throw ApiError.invalidParam('env must be one of sandbox, production');
    const rows = env ? await this.endpoints.list(TenantScopes.operator(projectId, env)) : await this.endpoints.listProject(LOOKUP, projectId);
    if (rows.length === 0 && !(await this.endpoints.projectExists(projectId))) throw ApiError.resourceMissing(`No such project: ${projectId}`);
    return { object: 'list', data: rows.map(endpointView) };
  }

  async get(endpointId: string): Promise<WebhookEndpointView> {
    return endpointView(await this.find(endpointId));
  }

  async patch(endpointId: string, body: PatchWebhookEndpointDto, requestId: string): Promise<WebhookEndpointView> {
    if (body.url !== undefined) await this.assertUrl(body.url);
    const current = await this.find(endpointId);
    const scope = TenantScopes.operator(current.projectId, current.env);
    const view = await this.sql.transaction(async () => {
      const patched = await this.endpoints.patch(scope, endpointId, body, this.clock.nowMs());
      if (!patched) throw ApiError.resourceMissing(`No such webhook endpoint: ${endpointId}`);
      await this.audit(scope, 'webhook_endpoint.updated', endpointId, requestId, { fields: Object.keys(body).sort(), status: patched.status });
      return endpointView(patched);
    });
    // Enabled again: as after a creation, the answer waits until every replica tracks the scope.
    if (current.status !== 'enabled' && view.status === 'enabled') await this.presence.enabled(scope);
    return view;
  }

  async delete(endpointId: string, requestId: string): Promise<WebhookEndpointDeleted> {
    const current = await this.find(endpointId);
    const scope = TenantScopes.operator(current.projectId, current.env);
    await this.sql.transaction(async () => {
      if (!(await this.endpoints.delete(scope, endpointId))) throw ApiError.resourceMissing(`No such webhook endpoint: ${endpointId}`);
      await this.audit(scope, 'webhook_endpoint.deleted', endpointId, requestId, {});
    });
    return { object: 'webhook_endpoint', id: endpointId, deleted: true };
  }

  async rotate(endpointId: string, requestId: string): Promise<WebhookEndpointView> {
    const current = await this.find(endpointId);
    const scope = TenantScopes.operator(current.projectId, current.env);
    const nowMs = this.clock.nowMs();
    return this.sql.transaction(async () => {
      const rotated = await this.endpoints.rotate(scope, endpointId, nowMs + PREVIOUS_SECRET_TTL_MS, nowMs);
      if (!rotated) throw ApiError.resourceMissing(`No such webhook endpoint: ${endpointId}`);
      await this.audit(scope, 'webhook_endpoint.secret_rotated', endpointId, requestId, { secretVersion: rotated.secretVersion });
      return {
        ...endpointView(rotated),
        secret: this.secrets.secret(endpointId, rotated.secretVersion),
        previousSecretExpiresAt: Math.floor((nowMs + PREVIOUS_SECRET_TTL_MS) / 1000),
      };
    });
  }

  async test(endpointId: string, requestId: string): Promise<WebhookDeliveryView> {
    const current = await this.find(endpointId);
    const scope = TenantScopes.operator(current.projectId, current.env);
    return this.sql.transaction(async () => {
      const event = this.recorder.envelope(scope, 'test', { message: 'A test event sent from the operator API' });
      const delivery = await this.outbox.recordTest(scope, endpointId, event, this.clock.nowMs());
      await this.audit(scope, 'webhook_endpoint.test_sent', endpointId, requestId, { deliveryId: delivery.id });
      return deliveryView(delivery);
    });
  }

  async deliveries(endpointId: string, query: { status?: string; limit?: string; startingAfter?: string }): Promise<WebhookDeliveryList> {
    if (query.status !== undefined && !(DELIVERY_STATUSES as readonly string[]).includes(query.status)) {
      throw ApiError.invalidParam(`status must be one of ${DELIVERY_STATUSES.join(', ')}`);
    }
    const limit = query.limit === undefined ? 20 : Number(query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw ApiError.invalidParam('limit must be an integer between 1 and 100');
    const endpoint = await this.find(endpointId);
    const scope = TenantScopes.operator(endpoint.projectId, endpoint.env);
    let startingAfter: { createdAtMs: number; id: string } | undefined;
    if (query.startingAfter !== undefined) {
      const cursor = await this.outbox.find(LOOKUP, query.startingAfter);
      if (!cursor || cursor.endpointId !== endpointId) throw ApiError.invalidParam('startingAfter must be a delivery id of this endpoint');
      startingAfter = { createdAtMs: cursor.createdAtMs, id: cursor.id };
    }
    const rows = await this.outbox.listForEndpoint(scope, endpointId, { status: query.status as DeliveryStatus | undefined, limit: limit + 1, startingAfter });
    return { object: 'list', data: rows.slice(0, limit).map(deliveryView), hasMore: rows.length > limit };
  }

  async retry(deliveryId: string, requestId: string): Promise<WebhookDeliveryView> {
    const delivery = await this.outbox.find(LOOKUP, deliveryId);
    if (!delivery) throw ApiError.resourceMissing(`No such webhook delivery: ${deliveryId}`);
    if (delivery.status === 'pending') throw ApiError.invalidParam(`deliveryId: ${deliveryId} is pending; it is already queued`);
    const scope = TenantScopes.operator(delivery.projectId, delivery.env);
    return this.sql.transaction(async () => {
      const retried = await this.outbox.retry(scope, deliveryId, this.clock.nowMs());
      if (!retried) throw ApiError.invalidParam(`deliveryId: ${deliveryId} is pending; it is already queued`);
      await this.audit(scope, 'webhook_delivery.retried', delivery.endpointId, requestId, { deliveryId });
      return deliveryView(retried);
    });
  }

  private async find(endpointId: string): Promise<EndpointRecord> {
    const found = await this.endpoints.find(LOOKUP, endpointId);
    if (!found) throw ApiError.resourceMissing(`No such webhook endpoint: ${endpointId}`);
    return found;
  }

  /** https and public addresses only (unless WEBHOOKS_ALLOW_PRIVATE): the name is resolved now, and again on every connection. */
  private async assertUrl(raw: string): Promise<void> {
    const verdict = checkEndpointUrl(raw, this.allowPrivate);
    if (!verdict.ok) throw ApiError.invalidParam(verdict.reason);
    if (this.allowPrivate) return;
    const host = verdict.url.hostname.replace(/^\[|\]$/g, '');
    let addresses: { address: string }[];
    try {
      addresses = await lookup(host, { all: true });
    } catch {
      throw ApiError.invalidParam(`url: ${host} does not resolve`);
    }
    if (addresses.length === 0 || addresses.some((a) => !isPublicAddress(a.address))) throw ApiError.invalidParam('url must resolve to public addresses only');
  }

  private async audit(scope: TenantScope, eventType: string, endpointId: string, requestId: string, details: Record<string, unknown>): Promise<void> {
    await this.journal.append(scope, {
      eventIdPrefix: 'op_webhook_',
      rail: 'webhooks',
      eventType,
      customerId: '',
      decision: 'applied',
      reason: `Operator: ${eventType} ${endpointId}`,
      actor: 'operator',
      requestId,
      details: { endpointId, ...details },
    });
  }
}
