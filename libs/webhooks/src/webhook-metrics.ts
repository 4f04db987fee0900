import { Injectable } from '@nestjs/common';
import { Counter, Histogram } from 'prom-client';
import { Metrics } from '#platform';

/** The webhooks' metrics, in the process registry: attempts by outcome (no endpoint label) and commit-to-delivery time. */
@Injectable()
export class WebhookMetrics {
  readonly deliveries: Counter<'outcome'>;
  readonly commitToDelivery: Histogram;

  constructor(metrics: Metrics) {
    this.deliveries = new Counter({
      name: 'webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome: succeeded, failed (will be retried), dead (retries exhausted)',
      labelNames: ['outcome'] as const,
      registers: [metrics.registry],
    });
    this.commitToDelivery = new Histogram({
      name: 'webhook_delivery_latency_seconds',
      help: 'Time from the commit of an event to its successful delivery (service clock)',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600],
      registers: [metrics.registry],
    });
  }
}
