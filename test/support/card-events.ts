/** A card subscription as the processor's events carry it. */
export interface CardSubscriptionOptions {
  id?: string;
  customer?: string;
  status?: string;
  product?: string;
  periodEnd?: number;
  cancelAtPeriodEnd?: boolean;
  metadata?: Record<string, string>;
  /** Several items (each its own price product and period end); default: one item of `product`. */
  items?: { product: string; periodEnd?: number }[];
}

/**
 * Builders of the processor's subscription objects and events, shared by the e2e card harness
 * and the medium card rail: `now` is the service clock in seconds, `id` makes unique ids.
 */
export function cardEventBuilders(now: () => number, id: (prefix: string) => string) {
  const subscription = (o: CardSubscriptionOptions = {}) => ({
    id: o.id ?? id('sub'),
    object: 'subscription',
    customer: o.customer ?? id('cus'),
    status: o.status ?? 'active',
    cancel_at_period_end: o.cancelAtPeriodEnd ?? false,
    metadata: o.metadata ?? {},
    items: {
      object: 'list',
      data: (o.items ?? [{ product: o.product ?? 'prod_pro', periodEnd: o.periodEnd }]).map((item) => ({
        id: id('si'),
        object: 'subscription_item',
        current_period_end: item.periodEnd ?? now() + 30 * 86400,
        price: { id: id('price'), product: item.product },
      })),
    },
  });
  const event = (type: string, object: Record<string, unknown>, o: { id?: string; livemode?: boolean; created?: number } = {}) => ({
    id: o.id ?? id('evt'),
    object: 'event',
    api_version: '2025-03-31.basil',
    created: o.created ?? now(),
    livemode: o.livemode ?? false,
    type,
    data: { object },
  });
  return { subscription, event };
}

/** What a lifecycle test sets on a card subscription: status, period, trial, pause, price. */
export interface LifecycleSubscriptionOptions {
  status?: string;
  start: number;
  end: number;
  trialEnd?: number | null;
  /** Collection paused until then (`null`: paused with no resume date); absent: not paused. */
  pauseResumesAt?: number | null;
  cancelAtPeriodEnd?: boolean;
  /** Minor units a month (default 999). */
  amount?: number;
  product?: string;
}

/**
 * A one-item monthly card subscription with the lifecycle's fields (start, trial end, pause,
 * the item's period and price), for subscription `s`; `id` makes unique ids.
 */
export function lifecycleCardSubscription(s: { id: string; customer: string }, o: LifecycleSubscriptionOptions, id: (prefix: string) => string) {
  return {
    id: s.id,
    object: 'subscription',
    customer: s.customer,
    status: o.status ?? 'active',
    livemode: false,
    start_date: o.start,
    created: o.start,
    trial_end: o.trialEnd ?? null,
    cancel_at_period_end: o.cancelAtPeriodEnd ?? false,
    pause_collection: o.pauseResumesAt === undefined ? null : { behavior: 'void', resumes_at: o.pauseResumesAt },
    metadata: {},
    items: {
      object: 'list',
      data: [
        {
          id: id('si'),
          object: 'subscription_item',
          current_period_start: o.start,
          current_period_end: o.end,
          quantity: 1,
          price: {
            id: id('price'),
            product: o.product ?? 'prod_pro',
            unit_amount: o.amount ?? 999,
            currency: 'usd',
            recurring: { interval: 'month', interval_count: 1 },
          },
        },
      ],
    },
  };
}
