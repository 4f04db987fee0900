import { Injectable } from '@nestjs/common';
import Stripe from 'stripe';
import { ApiError, Clock, type TenantScope, TenantScopes } from '#platform';
import { ProductCatalog } from '#entitlements';
import { type KnownHolders, RailCustomerResolver } from '../customers/rail-customer-resolver.service.js';
import { RailFieldError } from '../model/rail-bounds.js';
import { RAIL_ALIAS_TYPES, type RailSubscriptionRecord } from '../model/rail-model.js';
import { RailSettingsRepository, type RailSettingsRecord } from '../model/rail-settings.repository.js';
import { RailSubscriptionsRepository, type RailTransactionRecord } from '../model/rail-subscriptions.repository.js';
import {
  type CardLifecycleInput,
  type CardObject,
  type CardSubscriptionObject,
  cardGracePeriodDays,
  deriveCardLifecycle,
} from '../lifecycle/card-lifecycle.js';
import { type LedgerFact, type LifecycleResult } from '../lifecycle/lifecycle-outcome.js';
import type { Subscription } from '../lifecycle/subscription.js';
import { subscriptionOfRecord } from '../subscriptions/subscription-reads.service.js';
import { cardCustomerOf, invoiceSubscriptionId, paymentIdsOf } from './card-lifecycle-wiring.js';
import { moneyReturnOf, recordAccessOf } from '../model/rail-record-access.js';
import { type RailEventContext, type RailLifecycleChange, type RailStateChange, RailStateApplier } from '../model/rail-state-applier.service.js';
import { type RailPayment, RailRevenueFeed } from '../model/rail-revenue-feed.service.js';
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
/** The subscription object of a card event (or of a read of the processor's API: no event id). */
export interface CardRawSubscription {
  object: CardSubscriptionObject;
  eventId: string | null;
  eventType: string;
  livemode: boolean;
  /** The rail's settings when the caller read them already (the webhook gate): the grace period is read from them. */
  railSettings?: RailSettingsRecord | null;
}

/** Invoice, charge and dispute events the lifecycle reads, with the object each carries. */
const MONEY_EVENTS: ReadonlyMap<string, CardObject['object']> = new Map([
  ['invoice.paid', 'invoice'],
  ['invoice.payment_failed', 'invoice'],
  ['charge.refunded', 'charge'],
  ['charge.dispute.created', 'dispute'],
  ['charge.dispute.closed', 'dispute'],
] as const);

interface MoneyEvent {
  id: string;
  type: string;
  created: number;
  livemode: boolean;
  object: CardObject;
  previousAttributes: { amount_refunded?: number | null } | null;
  /** invoice.paid: the payment as the revenue ledger counts it. */
  payment: RailPayment | null;
  /** The rail's settings as the webhook gate read them for this request (absent: read when needed). */
  railSettings?: RailSettingsRecord | null;
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

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
    private readonly records: RailSubscriptionsRepository,
    private readonly settings: RailSettingsRepository,
  ) {}

  /** `settings`: the rail's settings as the webhook gate read them for this request (absent: read where the grace period is needed). */
  async receive(
    projectId: string,
    rawBody: Buffer,
    signatureHeader: string | undefined,
    requestId: string,
    settings?: RailSettingsRecord,
  ): Promise<RailNotificationView> {
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
    const data = isObject(body.data) ? body.data : {};
    const object = data.object as CardObject;
    const previousAttributes = isObject(data.previous_attributes) ? (data.previous_attributes as MoneyEvent['previousAttributes']) : null;
    const money = (payment: RailPayment | null): MoneyEvent => ({ ...event, object, previousAttributes, payment, railSettings: settings });
    return this.processor.process({ scope, rail: RAIL, notificationId: event.id, eventType: event.type, receivedAtMs }, () => {
      switch (event.kind) {
        case 'subscription':
          return this.applySubscription(scope, event.subscription, event.created, context, undefined, {
            object: object as CardSubscriptionObject,
            eventId: event.id,
            eventType: event.type,
            livemode: event.livemode,
            railSettings: settings,
          });
        case 'checkout':
          return this.linkCheckout(scope, event.session, context);
        case 'invoice':
          return this.applyMoney(scope, money(event.payment), context);
        default:
          if (MONEY_EVENTS.get(event.type) === object.object) return this.applyMoney(scope, money(null), context);
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
    raw?: CardRawSubscription,
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
    // The lifecycle of the event's subscription object: access follows its state. A status it
    // cannot place keeps the status table of the rail record alone.
    let access: Pick<RailStateChange, 'state' | 'endedBy' | 'items' | 'validUntil' | 'revenueState' | 'lifecycle'> = {
      state: cardSubscriptionActive(sub) ? 'active' : 'inactive',
      endedBy: 'expired',
      items: granting,
      validUntil,
    };
    let record: RailSubscriptionRecord | null | undefined;
    let customersLocked: string[] | undefined;
    if (raw) {
      ({ record, customersLocked } = await this.applier.lockRecordWithCustomers(scope, RAIL, sub.id, [customerId], false));
      const previous = this.previousOf(scope, record, catalogueKeys);
      const input: CardLifecycleInput = { eventId: raw.eventId ?? '', eventType: raw.eventType, created, livemode: raw.livemode, object: raw.object };
      const result = await this.derive(scope, previous, input, catalogueKeys, raw.railSettings);
      if (result.subscription) {
        const follows = recordAccessOf(result.subscription, granting);
        access = { ...follows, lifecycle: this.lifecycleChange(result, raw.eventId) };
      }
    }
    const result = await this.applier.apply(
      scope,
      {
        rail: RAIL,
        subscriptionId: sub.id,
        customerId,
        ...(railOnly ? { railOnlyCustomer: true } : {}),
        productId: known[0],
        ...access,
        railTimeMs: created * 1000,
        rawStatus: sub.cancelAtPeriodEnd ? `${sub.status} (cancel_at_period_end)` : sub.status,
        price: sub.price,
      },
      unknown.length > 0 ? { ...context, details: { ...context.details, productsNotInCatalogue: unknown } } : context,
      {
        catalogueKeys,
        onlyChanges: read !== undefined,
        subscriptionSerialized: true,
        ...(record !== undefined ? { lockedRecord: record, customersSerialized: customersLocked } : {}),
      },
    );
    return { decision: result.decision, customerId: result.subscription?.customerId ?? customerId, auditEventId: result.auditEventId };
  }

  /** The stored subscription object, or (a record applied before objects were stored) the one its record knows. */
  private previousOf(scope: TenantScope, record: RailSubscriptionRecord | null, catalogueKeys: ReadonlyMap<string, string[]>): Subscription | null {
    if (!record) return null;
    if (record.subscription) return record.subscription;
    const keys = [...new Set(record.items.flatMap((item) => catalogueKeys.get(item.productId) ?? []))];
    return subscriptionOfRecord(record, keys, scope.env, Math.floor(this.clock.nowMs() / 1000));
  }

  /**
   * deriveCardLifecycle with the rail's grace period (from `known`, the settings the webhook gate
   * read for this request, else read here); an amount out of bounds is 400 invalid_param_value (nothing stored).
   */
  private async derive(
    scope: TenantScope,
    previous: Subscription | null,
    input: CardLifecycleInput,
    catalogueKeys: ReadonlyMap<string, string[]>,
    known?: RailSettingsRecord | null,
  ): Promise<LifecycleResult> {
    // Only a billing problem reads the grace period (a past_due subscription, a failed invoice).
    const billing = input.eventType === 'invoice.payment_failed' || (input.object.object === 'subscription' && input.object.status === 'past_due');
    let gracePeriodDays = 0;
    if (billing) {
      const settings = known !== undefined ? known : await this.settings.find({ projectId: scope.projectId }, RAIL);
      try {
        gracePeriodDays = cardGracePeriodDays(settings?.settings.gracePeriodDays);
      } catch {
        // A setting written before it was validated counts as none.
      }
    }
    try {
      return deriveCardLifecycle(
        previous,
        input,
        { gracePeriodDays },
        { nowMs: this.clock.nowMs(), railTimeMs: input.created * 1000, entitlementKeysOf: (productId) => catalogueKeys.get(productId) ?? [] },
      );
    } catch (err) {
      if (err instanceof RailFieldError) throw ApiError.invalidParam(err.message);
      throw err;
    }
  }

  private lifecycleChange(result: LifecycleResult, railEventId: string | null): RailLifecycleChange {
    return { subscription: result.subscription, events: result.events, decision: result.decision, railEventId };
  }

  /**
   * Invoices, charges and disputes: the subscription they concern (an invoice names it; a
   * charge or dispute through the payment recorded from `invoice.paid`) moves as the lifecycle
   * says, and the money goes into the revenue ledger. Money of no known subscription is the
   * card customer's, when the service knows it.
   */
  private async applyMoney(scope: TenantScope, event: MoneyEvent, context: RailEventContext): Promise<NotificationOutcome> {
    const subscriptionId = invoiceSubscriptionId(event.object) ?? (await this.paymentSubscription(scope, paymentIdsOf(event.object)));
    // The subscription's lock, its record and its customer's writer lock: one statement.
    const { record, customersLocked } = subscriptionId
      ? await this.applier.lockRecordWithCustomers(scope, RAIL, subscriptionId, [], true)
      : { record: null, customersLocked: [] };
    const catalogueKeys = new Map<string, string[]>();
    for (const item of record?.items ?? []) catalogueKeys.set(item.productId, await this.catalog.entitlementKeysFor(scope.projectId, RAIL, item.productId));
    const previous = this.previousOf(scope, record, catalogueKeys);
    const input: CardLifecycleInput = {
      eventId: event.id,
      eventType: event.type,
      created: event.created,
      livemode: event.livemode,
      object: event.object,
      previousAttributes: event.previousAttributes,
    };
    const result = await this.derive(scope, previous, input, catalogueKeys, event.railSettings);

    if (!record || !previous) {
      const cardCustomer = cardCustomerOf(event.object);
      const holder = cardCustomer ? await this.customers.findByAlias(scope, { type: RAIL_ALIAS_TYPES.cardCustomerId, value: cardCustomer }) : null;
      const recorded = holder ? (await this.recordLedger(scope, holder, null, result.ledger, event)).recorded : false;
      const reason = !holder
        ? `${event.type} of no known subscription or card customer; nothing recorded`
        : recorded
          ? `${event.type} of card customer ${cardCustomer}: recorded in the revenue ledger; no subscription linked`
          : `${event.type} of card customer ${cardCustomer}: nothing to record`;
      return this.applier.record(scope, { rail: RAIL, customerId: holder, decision: recorded ? 'applied' : 'no_op', reason }, context);
    }

    const subscription = result.subscription ?? previous;
    // The record's item ends follow the access of the last change (a billing problem, a chargeback
    // cut them short); an invoice or charge names no item, so each item runs to the current period's end.
    const items = record.items.map((item) => ({ productId: item.productId, validUntil: subscription.currentPeriodEndsAt ?? item.validUntil }));
    const follows = recordAccessOf(subscription, items);
    const applied = await this.applier.apply(
      scope,
      {
        rail: RAIL,
        subscriptionId: record.subscriptionId,
        customerId: record.customerId,
        productId: record.productId,
        ...follows,
        // An invoice or charge says nothing newer about the subscription than its record: it applies on top of it.
        railTimeMs: Math.max(event.created * 1000, record.railTimeMs),
        rawStatus: record.rawStatus,
        lifecycle: this.lifecycleChange(result, event.id),
      },
      context,
      { catalogueKeys, subscriptionSerialized: true, lockedRecord: record, customersSerialized: customersLocked },
    );
    const { transactions } =
      applied.decision !== 'rejected'
        ? await this.recordLedger(
            scope,
            record.customerId,
            { subscriptionId: record.subscriptionId, productId: applied.subscription?.productId ?? record.productId },
            result.ledger,
            event,
          )
        : { transactions: [] };
    const decision = applied.decision === 'no_op' && result.ledger.length > 0 ? 'applied' : applied.decision;
    return { decision, customerId: applied.subscription?.customerId ?? record.customerId, auditEventId: applied.auditEventId, transactions };
  }

  /** The subscription whose paid invoice named one of these charge or payment intent ids, or null. */
  private async paymentSubscription(scope: TenantScope, ids: readonly string[]): Promise<string | null> {
    for (const id of ids) {
      const link = await this.records.findTransaction(scope, RAIL, id);
      if (link) return link.subscriptionId;
    }
    return null;
  }

  /**
   * The outcome's ledger facts: a payment as the invoice states it, refunds, chargebacks and
   * reversals through the revenue feed. Whether it recorded any, and the payment's charge and
   * payment intent to link to the subscription for later refunds and disputes (recorded with
   * the notification's claim, NotificationProcessor).
   */
  private async recordLedger(
    scope: TenantScope,
    customerId: string,
    subscription: { subscriptionId: string; productId: string } | null,
    facts: readonly LedgerFact[],
    event: MoneyEvent,
  ): Promise<{ recorded: boolean; transactions: Omit<RailTransactionRecord, 'rail'>[] }> {
    const subscriptionId = subscription?.subscriptionId ?? null;
    const transactions: Omit<RailTransactionRecord, 'rail'>[] = [];
    // The subscription's record was applied in this transaction: its product goes with the money (the ledger need not read it).
    const productOf = (of: string | null | undefined) => (subscription && of === subscription.subscriptionId ? { productId: subscription.productId } : {});
    let recorded = false;
    for (const fact of facts) {
      if (fact.kind === 'payment') {
        if (!event.payment) continue;
        await this.revenue.paid(scope, RAIL, customerId, { ...event.payment, ...productOf(event.payment.subscriptionId) });
        recorded = true;
        if (!subscriptionId) continue;
        for (const id of [fact.chargeId, fact.paymentIntentId]) {
          if (!id || id.length > 512 || transactions.some((t) => t.transactionId === id)) continue;
          transactions.push({ transactionId: id, subscriptionId, customerId, decision: 'applied', auditEventId: null });
        }
        continue;
      }
      const money = moneyReturnOf(fact, event.id, subscriptionId);
      if (!money) continue;
      await this.revenue.returned(scope, RAIL, customerId, { ...money, ...productOf(money.subscriptionId) });
      recorded = true;
    }
    return { recorded, transactions };
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
