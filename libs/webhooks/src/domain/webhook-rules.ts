/** Pure rules of outbound webhooks: event types, the retry schedule, the entitlement diff. No I/O. */

export const WEBHOOK_EVENT_TYPES = [
  'customer.entitlements.updated',
  'subscription.started',
  'subscription.renewed',
  'subscription.canceled',
  'subscription.uncanceled',
  'subscription.billing_issue',
  'subscription.expired',
  'subscription.refunded',
  'subscription.product_changed',
  'subscription.recovered',
  'subscription.paused',
  'subscription.resumed',
  'subscription.extended',
  'subscription.price_change',
  'subscription.refund_reversed',
  'subscription.transferred',
  'subscription.consumption_requested',
  'purchase.completed',
  'entitlement.granted_manually',
  'entitlement.revoked_manually',
  'customer.erased',
  'test',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export const ENDPOINT_STATUSES = ['enabled', 'disabled', 'disabled_failing'] as const;
export type EndpointStatus = (typeof ENDPOINT_STATUSES)[number];
export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed', 'dead'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** At most this many endpoints per project and environment. */
export const MAX_ENDPOINTS_PER_ENV = 16;
/** At most this many attempts of one endpoint in flight at once, per replica. */
export const MAX_IN_FLIGHT_PER_ENDPOINT = 8;
export const DELIVERY_TIMEOUT_MS = 10_000;
/** Response bytes read at most (the rest is dropped). */
export const MAX_RESPONSE_BYTES = 4096;
/** How long the previous secret still signs after a rotation. */
export const PREVIOUS_SECRET_TTL_MS = 24 * 3600 * 1000;
/** An endpoint whose deliveries all failed for this long is set to disabled_failing. */
export const FAILING_DISABLE_AFTER_MS = 5 * 24 * 3600 * 1000;

/** Delays before the 2nd … 9th attempt (service clock); after the 9th failure a delivery is dead. */
export const RETRY_DELAYS_MS = [10_000, 60_000, 300_000, 1_800_000, 7_200_000, 21_600_000, 43_200_000, 86_400_000] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** After the `attempts`-th failed attempt: the time of the next one, or null when the delivery is dead. */
export function nextAttemptAtMs(attempts: number, nowMs: number): number | null {
  if (attempts < 1 || attempts >= MAX_ATTEMPTS) return null;
  return nowMs + RETRY_DELAYS_MS[attempts - 1];
}

/** Whether an endpoint subscribed to `eventTypes` receives `type` (`*` is every type). */
export function endpointWants(eventTypes: readonly string[], type: string): boolean {
  return eventTypes.includes('*') || eventTypes.includes(type);
}

export const CHANGE_CAUSES = [
  'purchase',
  'renewal',
  'grant',
  'revoke',
  'refund',
  'expiration',
  'migration',
  'billing_issue',
  'pause',
  'chargeback',
  'extension',
  'product_change',
  'refund_reversed',
] as const;
export type ChangeCause = (typeof CHANGE_CAUSES)[number];
export type ChangeKind = 'activated' | 'extended' | 'deactivated';

/** One active entitlement as the diff sees it (collapsed per key: the longest-lasting rail wins). */
export interface ActiveEntitlementView {
  key: string;
  /** Unix seconds; null = lifetime. */
  validUntil: number | null;
  rail: string;
}

/** The view of a public entitlement row. */
export const activeView = (e: { key: string; validUntil: number | null; source: { rail: string } }): ActiveEntitlementView => ({
  key: e.key,
  validUntil: e.validUntil,
  rail: e.source.rail,
});

export interface EntitlementChange {
  key: string;
  change: ChangeKind;
  cause: ChangeCause;
  rail: string;
  validUntil: number | null;
}

const lasting = (validUntil: number | null): number => validUntil ?? Number.POSITIVE_INFINITY;

/** Collapses active rows to one per key: lifetime first, then the later end. */
export function collapseByKey(rows: readonly ActiveEntitlementView[]): Map<string, ActiveEntitlementView> {
  const byKey = new Map<string, ActiveEntitlementView>();
  for (const row of rows) {
    const current = byKey.get(row.key);
    if (!current || lasting(row.validUntil) > lasting(current.validUntil)) byKey.set(row.key, row);
  }
  return byKey;
}

/**
 * The changes between a customer's active entitlements before and after a change: keys that
 * became active, keys whose `validUntil` moved, keys no longer active. `causeOf` names why
 * (the writer knows: purchase, renewal, grant, revoke, refund …). Sorted by key.
 */
export function diffEntitlements(
  before: readonly ActiveEntitlementView[],
  after: readonly ActiveEntitlementView[],
  causeOf: (key: string, change: ChangeKind) => ChangeCause,
): EntitlementChange[] {
  const was = collapseByKey(before);
  const now = collapseByKey(after);
  const changes: EntitlementChange[] = [];
  for (const [key, row] of now) {
    const old = was.get(key);
    if (!old) changes.push({ key, change: 'activated', cause: causeOf(key, 'activated'), rail: row.rail, validUntil: row.validUntil });
    else if (old.validUntil !== row.validUntil)
      changes.push({ key, change: 'extended', cause: causeOf(key, 'extended'), rail: row.rail, validUntil: row.validUntil });
  }
  for (const [key, row] of was) {
    if (!now.has(key)) changes.push({ key, change: 'deactivated', cause: causeOf(key, 'deactivated'), rail: row.rail, validUntil: row.validUntil });
  }
  return changes.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

const rowKey = (row: ActiveEntitlementView): string => `${row.key}\u0000${row.rail}`;

/** The (key, rail) rows a change wrote: present on one side only, or with another `validUntil`. */
export function changedRows(before: readonly ActiveEntitlementView[], after: readonly ActiveEntitlementView[]): Set<string> {
  const was = new Map(before.map((row) => [rowKey(row), row.validUntil]));
  const now = new Map(after.map((row) => [rowKey(row), row.validUntil]));
  const changed = new Set<string>();
  for (const [key, validUntil] of now) if (!was.has(key) || was.get(key) !== validUntil) changed.add(key);
  for (const key of was.keys()) if (!now.has(key)) changed.add(key);
  return changed;
}

/**
 * A customer's rows as they are without one change: `current` with every row the change wrote
 * put back as it was before the change (or left out where it had none). With changes of one
 * customer numbered one after another, this is the state the change before this one announced.
 */
export function withoutChange(
  current: readonly ActiveEntitlementView[],
  before: readonly ActiveEntitlementView[],
  after: readonly ActiveEntitlementView[],
): ActiveEntitlementView[] {
  const changed = changedRows(before, after);
  return [...current.filter((row) => !changed.has(rowKey(row))), ...before.filter((row) => changed.has(rowKey(row)))];
}

/** The keys of the rows a change wrote (see changedRows). */
export function changedKeys(before: readonly ActiveEntitlementView[], after: readonly ActiveEntitlementView[]): Set<string> {
  const changed = changedRows(before, after);
  return new Set([...before, ...after].filter((row) => changed.has(rowKey(row))).map((row) => row.key));
}

/**
 * A customer's active set as an update announces it, in the text the sequence counter keeps:
 * one `[key, validUntil, rail]` per key (the row collapseByKey keeps; between rows that end
 * together, the rail that sorts first), sorted by key. Equal sets give equal text.
 */
export function announcedSetText(rows: readonly ActiveEntitlementView[]): string {
  // collapseByKey keeps the first of rows that end together: offered in rail order, that is the first rail.
  const byRail = [...rows].sort((a, b) => (a.rail < b.rail ? -1 : a.rail > b.rail ? 1 : 0));
  const sorted = [...collapseByKey(byRail).values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return JSON.stringify(sorted.map((row) => [row.key, row.validUntil, row.rail]));
}

/** The rows of an announced set's text (announcedSetText); null for text that is not one (treated as unknown). */
export function parseAnnouncedSet(text: string): ActiveEntitlementView[] | null {
  let entries: unknown;
  try {
    entries = JSON.parse(text);
  } catch {
    return null;
  }
  if (!Array.isArray(entries)) return null;
  const rows: ActiveEntitlementView[] = [];
  for (const entry of entries) {
    if (!Array.isArray(entry) || entry.length !== 3) return null;
    const [key, validUntil, rail] = entry as unknown[];
    if (typeof key !== 'string' || typeof rail !== 'string' || (validUntil !== null && typeof validUntil !== 'number')) return null;
    rows.push({ key, validUntil, rail });
  }
  return rows;
}

/**
 * Why each key changed since the set receivers last heard, for a change announced against that
 * set rather than against the state it read before: a key the change wrote has the writer's
 * cause; a key that left the set without the change writing it, its end passed, ended by time
 * (`expiration`); any other key (a change nobody announced) the writer's cause.
 */
export function causeSinceHeard(
  heard: readonly ActiveEntitlementView[],
  written: ReadonlySet<string>,
  nowSeconds: number,
  causeOf: (key: string, change: ChangeKind) => ChangeCause,
): (key: string, change: ChangeKind) => ChangeCause {
  const heardByKey = collapseByKey(heard);
  return (key, change) => {
    const was = heardByKey.get(key);
    const ended = change === 'deactivated' && !written.has(key) && was !== undefined && was.validUntil !== null && was.validUntil <= nowSeconds;
    return ended ? 'expiration' : causeOf(key, change);
  };
}
