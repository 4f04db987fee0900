/**
 * The state chart's count of one subscription. Pure: from the rail record's lifecycle state and
 * whether the ledger counts the subscription paying, the state it is counted in (one at a time);
 * from the state before and after a change, the facts to write.
 */

/** The states the state chart counts (`subscription_lifecycle_days.state`). */
export const CHART_STATES = ['active', 'trialing', 'in_grace_period', 'in_billing_retry', 'paused'] as const;
export type ChartState = (typeof CHART_STATES)[number];

/** A counted state and the product it is counted under. */
export interface CountedState {
  state: string;
  productId: string;
}

/**
 * `active` and `in_grace_period` count while the ledger counts the subscription paying (its
 * period not lapsed); `trialing`, `in_billing_retry` and `paused` while the lifecycle says so;
 * `on_hold`, `expired` and `refunded` count in no state. A record without a lifecycle state
 * (applied before the lifecycle, or by a rail that does not derive it) is `active` while paying.
 */
export function chartStateOf(lifecycleState: string | null, paying: boolean): ChartState | null {
  if (lifecycleState === null) return paying ? 'active' : null;
  if (lifecycleState === 'active' || lifecycleState === 'in_grace_period') return paying ? lifecycleState : null;
  if (lifecycleState === 'trialing' || lifecycleState === 'in_billing_retry' || lifecycleState === 'paused') return lifecycleState;
  return null;
}

export interface ChartStateMoves {
  left: CountedState | null;
  entered: CountedState | null;
  /** Trial facts: a trial started (entered `trialing`), ended (left it), converted (left it for `active`). */
  trial: { started: number; ended: number; converted: number; productId: string } | null;
}

/** What a change from `before` to `after` writes; null when the subscription is counted as before. */
export function chartStateMoves(before: CountedState | null, after: CountedState | null): ChartStateMoves | null {
  if (before?.state === after?.state && before?.productId === after?.productId) return null;
  let trial: ChartStateMoves['trial'] = null;
  if (before?.state === 'trialing' && after?.state !== 'trialing')
    trial = { started: 0, ended: 1, converted: after?.state === 'active' ? 1 : 0, productId: before.productId };
  else if (after?.state === 'trialing' && before?.state !== 'trialing') trial = { started: 1, ended: 0, converted: 0, productId: after.productId };
  return { left: before, entered: after, trial };
}
