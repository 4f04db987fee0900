import { Injectable } from '@nestjs/common';
import Stripe from 'stripe';
import { ApiError, Clock, type TenantScope, TenantScopes } from '#platform';
import { ProductCatalog } from '#entitlements';
import { type KnownHolders, RailCustomerResolver } from '../customers/rail-customer-resolver.service.js';
import { RailFieldError } from '../model/rail-bounds.js';
import { RAIL_ALIAS_TYPES } from '../model/rail-model.js';
import { type RailEventContext, RailStateApplier } from '../model/rail-state-applier.service.js';
import { RailRevenueFeed } from '../model/rail-revenue-feed.service.js';
import { NotificationProcessor, type NotificationOutcome } from '../notifications/notification-processor.service.js';
import type { RailNotificationView } from '../notifications/rail-notification.view.js';
import { RailSecrets } from '../secrets/rail-secrets.service.js';
import { WebhookGate } from '../webhooks/webhook-gate.service.js';
import {
  type CardCheckoutSession,
  type CardEvent,
  CardEventFormatError,
  type CardSubscription,
  cardSubscriptionActive,
  parseCardEvent,
} from './card-events.js';

const RAIL = 'card_payments' as const;
/** The processor's own default: a signature older than 300 s on the service clock is refused. */
export const CARD_SIGNATURE_TOLERANCE_SECONDS = 300;

/**
 * `POST /v1/webhooks/card_payments/{projectId}`: the processor's signature over the raw bytes
 * (its official library, every configured secret, tolerance on the service clock), then the
 * subscription object carried by the event is applied as it is (no call back to the processor).
 */
@Injectable()
export class CardWebhookService {
  constructor(
    private readonly gate: WebhookGate,
    private readonly secrets: RailSecrets,
    private readonly processor: NotificationProcessor,
    private readonly applier: RailStateApplier,
    private readonly customers: RailCustomerResolver,
    private readonly catalog: ProductCatalog,
    private readonly clock: Clock,
    private readonly revenue: RailRevenueFeed,
  ) {}

  async receive(projectId: string, rawBody: Buffer, signatureHeader: string | undefined, requestId: string): Promise<RailNotificationView> {
    // The project and its enabled rail were checked by the webhook gate (route policy) before the body was read.
    const receivedAtMs = this.clock.nowMs();
    const body = this.gate.jsonObject(rawBody);
    this.verify(projectId, rawBody, signatureHeader, receivedAtMs, requestId);

    let event: CardEvent;
    try {
      event = parseCardEvent(body);
    } catch (err) {
      if (err instanceof CardEventFormatError) throw ApiError.invalidParam(`Not a card-payment event: ${err.message}`);
      if (err instanceof RailFieldError) throw ApiError.invalidParam(err.message);
      throw err;
    }
    const scope: TenantScope = TenantScopes.ofVerifiedRailPayload(projectId, event.livemode ? 'production' : 'sandbox');
    const previous = await this.processor.previousAnswer(projectId, RAIL, event.id);
    if (previous) return previous;

    const context: RailEventContext = {
      eventType: event.type,
      notificationId: event.id,
      signatureVerified: true,
      reconciledWithProvider: false,
      rawEventReceivedAt: receivedAtMs,
      actor: `rail:${RAIL}`,
      requestId,
    };
    return this.processor.process({ scope, rail: RAIL, notificationId: event.id, eventType: event.type, receivedAtMs }, () => {
      switch (event.kind) {
        case 'subscription':
          return this.applySubscription(scope, event.subscription, event.created, context);
        case 'checkout':
          return this.linkCheckout(scope, event.session, context);
        case 'invoice':
          return this.recordInvoice(scope, event, context);
        default:
          return this.applier.record(
            scope,
            { rail: RAIL, customerId: null, decision: 'no_op', reason: `Event type ${event.type} changes no entitlement` },
            context,
          );
      }
    });
  }

  /** Tries every configured secret; 400 invalid_signature (one log line) when none verifies. */
  private verify(projectId: string, rawBody: Buffer, header: string | undefined, receivedAtMs: number, requestId: string): void {
    const secrets = this.secrets.cardPayments(projectId)?.webhookSecrets ?? [];
    if (secrets.length === 0) throw this.gate.invalidSignature(projectId, RAIL, 'no webhook secret is configured for the project', requestId);
    if (!header) throw this.gate.invalidSignature(projectId, RAIL, 'the Stripe-Signature header is missing', requestId);
    let reason = 'no configured secret matches the signature';
    for (const secret of secrets) {
      try {
        Stripe.webhooks.constructEvent(rawBody, header, secret, CARD_SIGNATURE_TOLERANCE_SECONDS, undefined, receivedAtMs);
        return;
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        // The library's messages name the failure, never the secret; keep the first line only.
        if (/tolerance/i.test(message)) reason = 'the signature timestamp is outside the 300 s tolerance';
        else if (/Unable to extract timestamp and signatures/i.test(message)) reason = 'the Stripe-Signature header is malformed';
      }
    }
    throw this.gate.invalidSignature(projectId, RAIL, reason, requestId);
  }

  /**
   * Applies a subscription object (from an event, or read from the processor's API) through the
   * rail model; `created` (Unix seconds) is its rail time. Writes one audit entry. A read of the
   * rail passes the holders it read (`read`) and keeps only a change (RailApplyOptions.onlyChanges).
   */
  async applySubscription(
    scope: TenantScope,
    sub: CardSubscription,
    created: number,
    context: RailEventContext,
    read?: { holders: KnownHolders },
  ): Promise<NotificationOutcome> {
    // Before the customer is resolved: resolving can fold a rail-only customer (see serializeSubscription).
    await this.applier.serializeSubscription(scope, RAIL, sub.id);
    const cardNode = { type: RAIL_ALIAS_TYPES.cardCustomerId, value: sub.customer };
    const holders = read?.holders ?? {};
    // Every item's product grants its keys until the item's period end; products missing from
    // the catalogue grant nothing (the subscription is rejected only when none is known).
    const items = sub.items.flatMap((item) => (item.productId ? [{ productId: item.productId, validUntil: item.currentPeriodEnd }] : []));
    const products = [...new Set(items.map((item) => item.productId))];
    const catalogueKeys = new Map<string, string[]>();
    for (const productId of products) catalogueKeys.set(productId, await this.catalog.entitlementKeysFor(scope.projectId, RAIL, productId));
    const known = products.filter((productId) => (catalogueKeys.get(productId) ?? []).length > 0);
    if (known.length === 0) {
      const holder = await this.customers.holder(scope, RAIL, sub.id, cardNode, holders);
      const reason =
        products.length === 0
          ? `Subscription ${sub.id} carries no product`
          : products.length === 1
            ? `Product ${products[0]} is not in the project's catalogue for ${RAIL}`
            : `Products ${products.join(', ')} are not in the project's catalogue for ${RAIL}`;
      return this.applier.record(scope, { rail: RAIL, customerId: holder, decision: 'rejected', reason }, context);
    }
    // The record keeps the known items only (what the subscription grants); its end is theirs.
    const unknown = products.filter((productId) => !known.includes(productId));
    const granting = items.filter((item) => known.includes(item.productId));
    const validUntil = granting.some((item) => item.validUntil === null) ? null : Math.max(...granting.map((item) => item.validUntil as number));
    const { customerId, railOnly } = await this.customers.cardSubscriptionCustomer(scope, sub, holders);
    const result = await this.applier.apply(
      scope,
      {
        rail: RAIL,
        subscriptionId: sub.id,
        customerId,
        ...(railOnly ? { railOnlyCustomer: true } : {}),
        productId: known[0],
        items: granting,
        state: cardSubscriptionActive(sub) ? 'active' : 'inactive',
        endedBy: 'expired',
        validUntil,
        railTimeMs: created * 1000,
        rawStatus: sub.cancelAtPeriodEnd ? `${sub.status} (cancel_at_period_end)` : sub.status,
        price: sub.price,
      },
      unknown.length > 0 ? { ...context, details: { ...context.details, productsNotInCatalogue: unknown } } : context,
      { catalogueKeys, onlyChanges: read !== undefined, subscriptionSerialized: true },
    );
    return { decision: result.decision, customerId: result.subscription?.customerId ?? customerId, auditEventId: result.auditEventId };
  }

  /** `invoice.paid`: recognised cash of the card customer's customer; the decision stays no_op (no entitlement changes). */
  private async recordInvoice(scope: TenantScope, event: Extract<CardEvent, { kind: 'invoice' }>, context: RailEventContext): Promise<NotificationOutcome> {
    const holder = event.customer ? await this.customers.findByAlias(scope, { type: RAIL_ALIAS_TYPES.cardCustomerId, value: event.customer }) : null;
    if (!holder || !event.payment)
      return this.applier.record(
        scope,
        { rail: RAIL, customerId: holder, decision: 'no_op', reason: `Invoice of an unknown card customer or without a paid amount` },
        context,
      );
    await this.revenue.paid(scope, RAIL, holder, event.payment);
    return this.applier.record(
      scope,
      { rail: RAIL, customerId: holder, decision: 'no_op', reason: `Invoice ${event.payment.transactionId} paid: recognised as cash; changes no entitlement` },
      context,
    );
  }

  /** `checkout.session.completed` links its card customer to the customer it names (see RailCustomerResolver.link). */
  private async linkCheckout(scope: TenantScope, session: CardCheckoutSession, context: RailEventContext): Promise<NotificationOutcome> {
    if (!session.customer)
      return this.applier.record(
        scope,
        { rail: RAIL, customerId: null, decision: 'no_op', reason: `Checkout session ${session.id} has no card customer` },
        context,
      );
    const cardNode = { type: RAIL_ALIAS_TYPES.cardCustomerId, value: session.customer };
    const named = await this.customers.resolveNamed(scope, session.hints);
    if (!named) {
      const holder = await this.customers.findByAlias(scope, cardNode);
      return this.applier.record(
        scope,
        { rail: RAIL, customerId: holder, decision: 'no_op', reason: `Checkout session ${session.id} names no customer (metadata or client_reference_id)` },
        context,
      );
    }
    const outcome = await this.customers.link(scope, cardNode, named);
    switch (outcome.kind) {
      case 'linked':
        return this.applier.record(
          scope,
          { rail: RAIL, customerId: named, decision: 'applied', reason: `Card customer ${session.customer} linked to ${named}` },
          context,
        );
      case 'already_linked':
        return this.applier.record(
          scope,
          { rail: RAIL, customerId: named, decision: 'no_op', reason: `Card customer ${session.customer} is already linked to ${named}` },
          context,
        );
      case 'folded':
        return this.applier.record(
          scope,
          {
            rail: RAIL,
            customerId: named,
            decision: 'applied',
            reason: `Card customer ${session.customer} linked to ${named}; rail-only customer ${outcome.railOnlyCustomerId} folded into it (rail aliases, subscription records and entitlements moved)`,
          },
          context,
        );
      case 'conflict':
        return this.applier.record(
          scope,
          {
            rail: RAIL,
            customerId: outcome.customerId,
            decision: 'no_op',
            reason: `Card customer ${session.customer} belongs to ${outcome.customerId}, not ${named}: queued for review, nothing moved`,
          },
          context,
        );
    }
  }
}
