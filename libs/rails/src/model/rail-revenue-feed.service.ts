import { Injectable } from '@nestjs/common';
import type { TenantScope } from '#platform';
import type { PurchaseRail, RailState } from './rail-model.js';

/** An amount as the rail states it: minor units of the currency (card), or millionths of its major unit (stores). */
export type RailAmount = { minor: number } | { micros: number };

export type BillingPeriodUnit = 'day' | 'week' | 'month' | 'year';

/** One priced line of a subscription (card: one per item), per billing period. */
export interface RailPriceLine {
  /** ISO 4217, upper case. */
  currency: string;
  /** The price of one unit for one billing period. */
  amount: RailAmount;
  quantity: number;
  /** The billing period when the rail states it (card `recurring`); null when only its length is known. */
  period: { unit: BillingPeriodUnit; count: number } | null;
  /** The current period's length in ms (stores), from which the period is inferred when `period` is null. */
  periodMs: number | null;
}

/** One paid transaction (recognised cash). */
export interface RailPayment {
  /** The rail's id of the payment (iOS transactionId, card `in_…`, Android order id): counted once. */
  transactionId: string;
  currency: string;
  amount: RailAmount;
  /** A subscription payment (true) or a one-off purchase. */
  recurring: boolean;
  paidAtMs: number;
  /** The rail subscription the payment bills, when known (its product segments the revenue charts). */
  subscriptionId?: string | null;
  /** That subscription's product as its record stands in this transaction, when the rail has it at hand (spares the ledger a read). */
  productId?: string;
}

/** Money that went back (a refund, a chargeback) or came back (a chargeback reversed), counted once by `factId`. */
export interface RailMoneyReturn {
  kind: 'refund' | 'chargeback' | 'reversal';
  /** Unique on the rail per fact (card: `refund:<event id>`, `chargeback:<dispute id>`, `reversal:<dispute id>`). */
  factId: string;
  /** The rail's id of what it concerns (a charge, a dispute, a transaction). */
  transactionId: string | null;
  subscriptionId: string | null;
  currency: string;
  /** Positive: how much moved. */
  amount: RailAmount;
  occurredAtMs: number;
  /** The product of `subscriptionId`'s record as it stands in this transaction, when the rail has it at hand (spares the ledger a read). */
  productId?: string;
}

/** A subscription record's revenue facts after a rail change, as the rail state applier wrote it. */
export interface RailRevenueChange {
  rail: PurchaseRail;
  subscriptionId: string;
  customerId: string;
  state: RailState;
  /** Unix seconds; null = lifetime. */
  validUntil: number | null;
  /** The price the change carries; null when it carries none (the last known price stays). */
  price: RailPriceLine[] | null;
  payment: RailPayment | null;
  /**
   * The subscription record as the change just wrote it (product, rail time, the lifecycle state
   * of its object): the ledger reads them from the record when absent.
   */
  written?: { productId: string; railTimeMs: number; lifecycleState: string | null };
}

/**
 * What another context (reporting's revenue ledger) attaches to hear every rail change, in the
 * transaction of the change: a failing sink rolls the change back.
 */
export interface RailRevenueSink {
  changed(scope: TenantScope, change: RailRevenueChange): Promise<void>;
  paid(scope: TenantScope, rail: PurchaseRail, customerId: string, payment: RailPayment): Promise<void>;
  /** A refund, chargeback or reversal of a customer's money. */
  returned?(scope: TenantScope, rail: PurchaseRail, customerId: string, money: RailMoneyReturn): Promise<void>;
  /** The payment the ledger recorded for the rail's transaction id (an order), in micros; null when none. */
  recordedPayment?(scope: TenantScope, rail: PurchaseRail, transactionId: string): Promise<{ amountMicros: number; currency: string } | null>;
  /** Every subscription of `fromCustomerId` moved to `toCustomerId` (a rail-only customer folded into another). */
  reassigned(scope: TenantScope, fromCustomerId: string, toCustomerId: string): Promise<void>;
}

/**
 * The port through which the rails report revenue facts (prices, payments) without knowing
 * who listens. Without a sink it costs nothing.
 */
@Injectable()
export class RailRevenueFeed {
  private sink: RailRevenueSink | null = null;

  attach(sink: RailRevenueSink): void {
    this.sink = sink;
  }

  async changed(scope: TenantScope, change: RailRevenueChange): Promise<void> {
    await this.sink?.changed(scope, change);
    if (change.payment) {
      const subscriptionId = change.payment.subscriptionId ?? change.subscriptionId;
      // The payment bills the changed subscription: its product is the one just written.
      const productId = change.payment.productId ?? (subscriptionId === change.subscriptionId ? change.written?.productId : undefined);
      await this.sink?.paid(scope, change.rail, change.customerId, { ...change.payment, subscriptionId, ...(productId !== undefined ? { productId } : {}) });
    }
  }

  async paid(scope: TenantScope, rail: PurchaseRail, customerId: string, payment: RailPayment): Promise<void> {
    await this.sink?.paid(scope, rail, customerId, payment);
  }

  async returned(scope: TenantScope, rail: PurchaseRail, customerId: string, money: RailMoneyReturn): Promise<void> {
    await this.sink?.returned?.(scope, rail, customerId, money);
  }

  /** What was paid for an order (an Android order id), as the ledger recorded it: the amount of a refund whose subscription states no price. */
  async recordedPayment(scope: TenantScope, rail: PurchaseRail, transactionId: string): Promise<{ amountMicros: number; currency: string } | null> {
    return (await this.sink?.recordedPayment?.(scope, rail, transactionId)) ?? null;
  }

  async reassigned(scope: TenantScope, fromCustomerId: string, toCustomerId: string): Promise<void> {
    await this.sink?.reassigned(scope, fromCustomerId, toCustomerId);
  }
}
