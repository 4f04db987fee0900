import { Module } from '@nestjs/common';
import { AuditModule } from '#audit';
import { EntitlementsModule } from '#entitlements';
import { IdentityModule } from '#identity';
import { WebhookDeliveriesRepository } from './delivery/webhook-deliveries.repository.js';
import { WebhookDispatcher } from './delivery/webhook-dispatcher.service.js';
import { WebhookEndpointsController } from './endpoints/webhook-endpoints.controller.js';
import { WebhookEndpointsRepository } from './endpoints/webhook-endpoints.repository.js';
import { WebhookEndpointsService } from './endpoints/webhook-endpoints.service.js';
import { WebhookSecrets } from './endpoints/webhook-secrets.service.js';
import { ExpiryScanJob } from './expiry/expiry-scan.job.js';
import { WebhookOutboxRepository } from './outbox/webhook-outbox.repository.js';
import { WebhookOutbox } from './outbox/webhook-outbox.service.js';
import { EndpointPresence } from './outbox/endpoint-presence.service.js';
import { WebhookMetrics } from './webhook-metrics.js';

/**
 * Outbound webhooks: entitlement changes out to the app's own back-end. Attaches its outbox
 * to the entitlements context's change feed and to identity's erasure hooks; delivers after
 * commit with its dispatcher; reports time passing with a recurring durable job.
 */
@Module({
  imports: [AuditModule, EntitlementsModule, IdentityModule],
  controllers: [WebhookEndpointsController],
  providers: [
    WebhookSecrets,
    WebhookEndpointsRepository,
    WebhookEndpointsService,
    WebhookOutboxRepository,
    EndpointPresence,
    WebhookOutbox,
    WebhookDeliveriesRepository,
    WebhookDispatcher,
    WebhookMetrics,
    ExpiryScanJob,
  ],
  exports: [WebhookOutbox, WebhookDispatcher],
})
export class WebhooksModule {}
