/**
 * Card payments: which subscription an invoice, charge or dispute concerns. Pure.
 */
import type { CardObject } from '../lifecycle/card-lifecycle.js';

type Ref = string | { id?: unknown } | null | undefined;
function refId(value: Ref): string | null {
  if (typeof value === 'string') return value || null;
  return typeof value?.id === 'string' && value.id ? value.id : null;
}

/** The subscription an invoice names (older API versions at the top, current ones under `parent`). */
export function invoiceSubscriptionId(object: CardObject): string | null {
  if (object.object !== 'invoice') return null;
  return refId(object.subscription as Ref) ?? refId(object.parent?.subscription_details?.subscription as Ref);
}

/** The charge and payment intent ids a charge or dispute names, to find the payment recorded from `invoice.paid`. */
export function paymentIdsOf(object: CardObject): string[] {
  if (object.object === 'charge') return [object.id, refId(object.payment_intent as Ref)].filter((id): id is string => id !== null);
  if (object.object === 'dispute') return [refId(object.charge as Ref), refId(object.payment_intent as Ref)].filter((id): id is string => id !== null);
  return [];
}

/** The card customer a charge or dispute names (a dispute's expanded charge), or null. */
export function cardCustomerOf(object: CardObject): string | null {
  if (object.object === 'charge' || object.object === 'invoice') return refId(object.customer as Ref);
  if (object.object === 'dispute' && object.charge && typeof object.charge === 'object') return refId(object.charge.customer as Ref);
  return null;
}
