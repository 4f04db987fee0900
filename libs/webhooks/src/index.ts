import { WebhooksSchema1790000000980 } from './migrations/1790000000980-webhooks-schema.migration.js';
import { WebhooksTraceContext1790000002900 } from './migrations/1790000002900-webhooks-trace-context.migration.js';
import { WebhooksDeliveriesFillfactor1790000003100 } from './migrations/1790000003100-webhooks-deliveries-fillfactor.migration.js';
import { WebhooksSequenceWriters1790000003300 } from './migrations/1790000003300-webhooks-sequence-writers.migration.js';
import { WebhooksAnnouncedSets1790000003400 } from './migrations/1790000003400-webhooks-announced-sets.migration.js';
import { WebhooksLifecycleEventTypes1790000003660 } from './migrations/1790000003660-webhooks-lifecycle-event-types.migration.js';

export { WebhooksModule } from './webhooks.module.js';
export { WebhookOutbox } from './outbox/webhook-outbox.service.js';
export { WebhookDispatcher } from './delivery/webhook-dispatcher.service.js';
export { ExpiryScanJob } from './expiry/expiry-scan.job.js';
export * from './domain/webhook-rules.js';
export * from './domain/webhook-signatures.js';
export * from './domain/address-policy.js';

/** Migrations of the webhooks context, in order. */
export const WEBHOOKS_MIGRATIONS = [
  WebhooksSchema1790000000980,
  WebhooksTraceContext1790000002900,
  WebhooksDeliveriesFillfactor1790000003100,
  WebhooksSequenceWriters1790000003300,
  WebhooksAnnouncedSets1790000003400,
  WebhooksLifecycleEventTypes1790000003660,
];
