/**
 * Pure rules of the iOS store rail: environment mapping, and the subscription state a
 * decoded transaction stands for. No I/O, no clock.
 */
import type { Env } from '#platform';
import { checkRailAmount, checkRailMillis, checkRailText } from '../model/rail-bounds.js';
import type { RailState } from '../model/rail-model.js';

/** A decoded `environment` `Production` lands in production, anything else in sandbox. */
export function envOfStoreEnvironment(environment: string | undefined): Env {
  return environment === 'Production' ? 'production' : 'sandbox';
}

/** The fields of a decoded transaction (JWSTransactionDecodedPayload) the rail reads. */
export interface StoreTransaction {
  transactionId?: string;
  originalTransactionId?: string;
  productId?: string;
  bundleId?: string;
  environment?: string;
  type?: string;
  signedDate?: number;
  expiresDate?: number;
  revocationDate?: number;
  inAppOwnershipType?: string;
  appAccountToken?: string;
  /** Milli-units of `currency` (revenue ledger). */
  price?: number;
  currency?: string;
  purchaseDate?: number;
}

/**
 * Throws RailFieldError (`<field>.<name>`) when a decoded transaction carries an id over 512
 * characters or unstorable, or a time (Unix ms) out of range.
 */
export function checkTransactionBounds(transaction: StoreTransaction, field: string): void {
  for (const name of ['transactionId', 'originalTransactionId', 'productId', 'type'] as const) {
    const value = transaction[name];
    if (typeof value === 'string') checkRailText(value, `${field}.${name}`);
  }
  for (const name of ['signedDate', 'expiresDate', 'revocationDate'] as const) {
    const value = transaction[name];
    if (typeof value === 'number') checkRailMillis(value, `${field}.${name}`);
  }
  // Milli-units: 1,000 micros each.
  checkRailAmount(transaction.price, `${field}.price`, 1_000);
}

export interface StoreTransactionState {
  state: RailState;
  endedBy?: 'revoked';
  /** Unix seconds; null = lifetime. */
  validUntil: number | null;
  /** The rail's status word stored with the record. */
  rawStatus: string;
}

const toSeconds = (ms: number): number => Math.floor(ms / 1000);

/**
 * What a transaction says: revoked (`revocationDate`: refunded or revoked) → inactive at
 * once; with `expiresDate` (subscriptions) → active until then (a past date reads as expired
 * through validUntil); without (non-consumables, and any other type that carries no end) →
 * active for life.
 */
export function stateOfTransaction(transaction: StoreTransaction): StoreTransactionState {
  if (typeof transaction.revocationDate === 'number') {
    return { state: 'inactive', endedBy: 'revoked', validUntil: toSeconds(transaction.revocationDate), rawStatus: 'REVOKED' };
  }
  if (typeof transaction.expiresDate === 'number') {
    return { state: 'active', validUntil: toSeconds(transaction.expiresDate), rawStatus: transaction.type ?? 'TRANSACTION' };
  }
  return { state: 'active', validUntil: null, rawStatus: transaction.type ?? 'TRANSACTION' };
}

/** Family-shared transactions are never bound to the caller's identity. */
export function isFamilyShared(transaction: StoreTransaction): boolean {
  return transaction.inAppOwnershipType === 'FAMILY_SHARED';
}

/** App account tokens are UUIDs; identify stores them in lowercase. */
export function normaliseAppAccountToken(token: string | undefined | null): string | null {
  if (typeof token !== 'string' || token.length === 0) return null;
  const lower = token.toLowerCase();
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(lower) ? lower : null;
}
