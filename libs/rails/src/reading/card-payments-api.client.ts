import { Inject, Injectable } from '@nestjs/common';
import Stripe from 'stripe';
import { APP_CONFIG, type AppConfig, Clock } from '#platform';
import { retryAfterMsOf } from '../android/android-publisher.client.js';
import { RailReadUnavailable, backsOff } from './rail-read-errors.js';

/** The processor's JSON objects as read (a subscription object, as inside its webhook events). */
export type CardApiSubscription = Record<string, unknown>;

/** Listing of one customer's subscriptions; `customerFound` false when the processor does not know the customer (`404`). */
export interface CardCustomerSubscriptions {
  customerFound: boolean;
  subscriptions: CardApiSubscription[];
}

/** At most this many subscriptions of one customer are read (the processor's pages hold 100). */
const MAX_SUBSCRIPTIONS = 1000;

/**
 * Reads customers and subscriptions from the card processor's REST API with its official
 * library (`stripe`), pointed at CARD_PAYMENTS_API_BASE_URL (host, port, protocol), with the
 * read timeout and no retries of its own (the service's back-off decides when to read again).
 * One library client per API key, kept while the key is in the secrets file.
 */
@Injectable()
export class CardPaymentsApiClient {
  private readonly clients = new Map<string, Stripe>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  /** Every subscription of the card customer, all statuses (the processor leaves canceled ones out by default). */
  async customerSubscriptions(apiKey: string, customerId: string): Promise<CardCustomerSubscriptions> {
    const stripe = this.client(apiKey);
    const customer = await this.call('customers.retrieve', () => stripe.customers.retrieve(customerId), true);
    if (customer === null || (customer as { deleted?: boolean }).deleted === true) return { customerFound: false, subscriptions: [] };
    const subscriptions = await this.call('subscriptions.list', () =>
      stripe.subscriptions.list({ customer: customerId, status: 'all', limit: 100 }).autoPagingToArray({ limit: MAX_SUBSCRIPTIONS }),
    );
    return { customerFound: true, subscriptions: (subscriptions ?? []) as unknown as CardApiSubscription[] };
  }

  /** One subscription by id; null when the processor does not know it (`404`). */
  async subscription(apiKey: string, subscriptionId: string): Promise<CardApiSubscription | null> {
    const stripe = this.client(apiKey);
    return (await this.call('subscriptions.retrieve', () => stripe.subscriptions.retrieve(subscriptionId), true)) as CardApiSubscription | null;
  }

  /** Runs one call; a `404` is null when `missingIsNull`, every other failure RailReadUnavailable (the key never in the message). */
  private async call<T>(what: string, fn: () => Promise<T>, missingIsNull = false): Promise<T | null> {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof Stripe.errors.StripeError)) throw new RailReadUnavailable(`${what} failed (unexpected error)`);
      const status = err.statusCode;
      if (status === 404 && missingIsNull) return null;
      const headers = (err.headers ?? {}) as Record<string, string | undefined>;
      const detail = status ? `HTTP ${status}` : err.type === 'StripeConnectionError' ? 'no answer within the timeout or connection failed' : err.type;
      throw new RailReadUnavailable(`${what} failed (${detail})`, backsOff(status), retryAfterMsOf(headers['retry-after'], this.clock.nowMs()));
    }
  }

  private client(apiKey: string): Stripe {
    let client = this.clients.get(apiKey);
    if (!client) {
      const root = new URL(this.config.cardPaymentsApiBaseUrl);
      const protocol = root.protocol === 'http:' ? 'http' : 'https';
      client = new Stripe(apiKey, {
        host: root.hostname,
        port: root.port || (protocol === 'http' ? 80 : 443),
        protocol,
        timeout: this.config.railReadTimeoutMs,
        maxNetworkRetries: 0,
        telemetry: false,
      });
      // Rotated keys leave the map bounded by the keys ever configured on this replica.
      if (this.clients.size >= 1000) this.clients.delete(this.clients.keys().next().value as string);
      this.clients.set(apiKey, client);
    }
    return client;
  }
}
