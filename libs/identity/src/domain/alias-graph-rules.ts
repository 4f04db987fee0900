/**
 * Who wins in the alias graph, for identify, the purchase rails and bulk migration. A call
 * resolves two ids together: its primary id, the one the call is about (identify's and
 * migration's developer user id, a rail's purchase id), and a secondary id that comes with it
 * (identify's anonymous id, migration's rail ids, the customer a rail event names). Each is
 * held by an active customer or by none (a forgotten customer's node reads as none).
 *
 * - neither held: a new customer (`create`);
 * - one held, or both by the same customer: that customer, and the other id joins it (`join`);
 * - two customers, the primary's rail-only (no developer or anonymous id): the rail-only one is
 *   folded into the secondary's, which wins (`fold`);
 * - two customers otherwise: the primary's keeps both its ids and the call, nothing moves, and
 *   "these two may be one person" is queued for review with the primary's as the canonical
 *   customer (`review`). Customers are never merged without a review.
 */
export type OwnerDecision =
  | { kind: 'create' }
  | { kind: 'join'; customerId: string }
  | { kind: 'fold'; customerId: string; foldedCustomerId: string }
  | { kind: 'review'; customerId: string; otherCustomerId: string };

/** True when two different customers hold the ids: only then does `primaryRailOnly` matter (read it only then). */
export function ownersDisagree(primary: string | null, secondary: string | null): primary is string {
  return primary !== null && secondary !== null && primary !== secondary;
}

/** Without `primaryRailOnly` (the primary's customer holds a developer user id, or the caller never folds) there is no `fold`. */
export function decideOwner(primary: string | null, secondary: string | null): Exclude<OwnerDecision, { kind: 'fold' }>;
/** The customer a call resolves to (see the rules above); `primaryRailOnly` tells whether the primary's customer has only rail ids. */
export function decideOwner(primary: string | null, secondary: string | null, primaryRailOnly: boolean): OwnerDecision;
export function decideOwner(primary: string | null, secondary: string | null, primaryRailOnly = false): OwnerDecision {
  if (primary === null) return secondary === null ? { kind: 'create' } : { kind: 'join', customerId: secondary };
  if (secondary === null || secondary === primary) return { kind: 'join', customerId: primary };
  if (primaryRailOnly) return { kind: 'fold', customerId: secondary, foldedCustomerId: primary };
  return { kind: 'review', customerId: primary, otherCustomerId: secondary };
}
