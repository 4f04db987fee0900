// The customer page's panels: traits, entitlements, subscriptions with their lifecycle, the
// subscription history, identities, recent events.
import type { ReactNode } from 'react';
import type { CustomerDetail, CustomerEntitlement, HistoryEntry, Subscription } from '../api/types';
import { DataTable } from '../components/DataTable';
import { Empty, Status } from '../components/ui';
import { date, dateMs, micros } from '../format';

function EntitlementTable({ caption, rows }: { caption: string; rows: CustomerEntitlement[] }) {
  return (
    <DataTable
      rows={rows}
      rowKey={(row) => `${row.key}|${row.rail}|${row.subscriptionId}`}
      caption={caption}
      empty={`No ${caption.toLowerCase()} entitlements.`}
      columns={[
        { header: 'Key', cell: (row) => row.key },
        { header: 'State', cell: (row) => <Status value={row.state} /> },
        { header: 'Source', cell: (row) => `${row.source} (${row.rail})` },
        { header: 'Product', cell: (row) => row.productId },
        { header: 'Valid until', cell: (row) => (row.validUntil === null ? 'lifetime' : date(row.validUntil)) },
      ]}
    />
  );
}

/** Every trait identify stored, email and first name first. */
export function Traits({ traits }: { traits: CustomerDetail['traits'] }) {
  const entries: [string, string][] = [
    ['email', traits.email ?? '—'],
    ['firstName', traits.firstName ?? '—'],
    ...Object.entries(traits.other).map(([key, value]): [string, string] => [key, value === null ? 'null' : String(value)]),
  ];
  return (
    <section aria-labelledby="traits">
      <h2 id="traits">Traits</h2>
      <dl className="traits">
        {entries.map(([key, value]) => (
          <div key={key}>
            <dt>{key}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}

export function Entitlements({ rows }: { rows: CustomerEntitlement[] }) {
  return (
    <section aria-labelledby="entitlements">
      <h2 id="entitlements">Entitlements</h2>
      <EntitlementTable caption="Active" rows={rows.filter((row) => row.active)} />
      <EntitlementTable caption="Past" rows={rows.filter((row) => !row.active)} />
    </section>
  );
}

/** The lifecycle states of a subscription in human words. */
export const SUBSCRIPTION_STATE_WORDS: Record<Subscription['state'], string> = {
  active: 'Active',
  trialing: 'Trialing',
  in_grace_period: 'In grace period',
  in_billing_retry: 'Billing retry',
  on_hold: 'On hold',
  paused: 'Paused',
  expired: 'Expired',
  refunded: 'Refunded',
};

const EXPIRATION_WORDS: Record<NonNullable<Subscription['expirationReason']>, string> = {
  unsubscribe: 'unsubscribed',
  billing_error: 'billing error',
  developer_initiated: 'ended by the developer',
  price_increase: 'price increase not accepted',
  customer_support: 'customer support',
  product_unavailable: 'product unavailable',
  replaced: 'replaced by another subscription',
  refund: 'refunded',
  unknown: 'reason unknown',
};

const PERIOD_WORDS: Record<Subscription['periodType'], string> = { trial: 'free trial', intro: 'introductory offer', normal: 'normal', prepaid: 'prepaid' };

/** One fact of a subscription: a term and what it says. */
function Fact({ term, children }: { term: string; children: ReactNode }) {
  return (
    <div>
      <dt>{term}</dt>
      <dd>{children}</dd>
    </div>
  );
}

/** Whether auto-renew was turned off on a subscription that has not ended. */
function renewalOff(sub: Subscription): boolean {
  return sub.unsubscribeDetectedAt !== null && sub.state !== 'expired' && sub.state !== 'refunded';
}

function SubscriptionCard({ sub, headingId, railStatus }: { sub: Subscription; headingId: string; railStatus: string | null }) {
  const renewal = sub.kind === 'non_renewing' ? 'one-time purchase' : sub.willRenew ? 'renews' : 'does not renew';
  return (
    <article className="card subscription" aria-labelledby={headingId}>
      <h3 id={headingId}>
        {sub.productId} <small className="muted">({sub.rail})</small>
      </h3>
      <p className="badges">
        <span className={`badge badge-${sub.state}`}>{SUBSCRIPTION_STATE_WORDS[sub.state] ?? sub.state}</span>
        {renewalOff(sub) && <span className="badge badge-renewal_off">Auto-renew off</span>}
        {sub.billingIssueDetectedAt !== null && <span className="badge badge-billing_issue">Billing issue</span>}
        {sub.pendingProductId && <span className="badge">Pending product change</span>}
        {sub.priceChange && <span className="badge">Price change {sub.priceChange.state}</span>}
        {sub.refundedAt !== null && <span className="badge badge-refunded">Refund recorded</span>}
      </p>
      <dl className="facts">
        <Fact term="Subscription">
          <code>{sub.id}</code>
        </Fact>
        <Fact term="Access">{sub.isActive ? `yes, until ${sub.accessEndsAt === null ? 'forever (lifetime)' : date(sub.accessEndsAt)}` : 'no'}</Fact>
        <Fact term="Price">
          {sub.price ? micros(sub.price.amountMicros, sub.price.currency) : 'not stated by the rail'} · {PERIOD_WORDS[sub.periodType] ?? sub.periodType} period
          {sub.offer ? ` · ${sub.offer.type.replace(/_/g, ' ')} offer` : ''}
        </Fact>
        <Fact term="Current period">
          {sub.currentPeriodEndsAt === null ? 'lifetime' : `${date(sub.currentPeriodStartsAt)} to ${date(sub.currentPeriodEndsAt)}`}
        </Fact>
        <Fact term="Renewal">
          {renewal}
          {sub.unsubscribeDetectedAt !== null && ` · unsubscribed ${date(sub.unsubscribeDetectedAt)}`}
        </Fact>
        {sub.billingIssueDetectedAt !== null && (
          <Fact term="Billing issue">
            since {date(sub.billingIssueDetectedAt)}
            {sub.gracePeriodEndsAt !== null ? ` · grace period ends ${date(sub.gracePeriodEndsAt)}` : ' · no grace period'}
          </Fact>
        )}
        {(sub.pausedAt !== null || sub.autoResumeAt !== null) && (
          <Fact term="Pause">
            {sub.pausedAt !== null ? `paused ${date(sub.pausedAt)}` : 'pause scheduled'}
            {sub.autoResumeAt !== null ? ` · resumes by itself ${date(sub.autoResumeAt)}` : ' · no automatic resume'}
          </Fact>
        )}
        {sub.expiredAt !== null && (
          <Fact term="Ended">
            {date(sub.expiredAt)}
            {sub.expirationReason ? ` · ${EXPIRATION_WORDS[sub.expirationReason] ?? sub.expirationReason}` : ''}
          </Fact>
        )}
        {sub.refundedAt !== null && <Fact term="Refund">recorded {date(sub.refundedAt)}</Fact>}
        {sub.pendingProductId && <Fact term="Pending product">{sub.pendingProductId} at the next renewal</Fact>}
        {sub.priceChange && (
          <Fact term="Price change">
            {sub.priceChange.state}: {micros(sub.priceChange.amountMicros, sub.priceChange.currency)}
            {sub.priceChange.effectiveAt !== null ? ` from ${date(sub.priceChange.effectiveAt)}` : ''}
          </Fact>
        )}
        <Fact term="Updated">
          {date(sub.updatedAt)}
          {railStatus ? ` · rail status ${railStatus}` : ''}
          {sub.storeEnvironment === 'sandbox' ? ' · store sandbox' : ''}
        </Fact>
      </dl>
    </article>
  );
}

/** Each subscription with its lifecycle: state, renewal, billing issue and grace, pause, end, refund, pending changes, price. */
export function Subscriptions({ subscriptions, records }: { subscriptions: Subscription[]; records: CustomerDetail['subscriptions'] }) {
  const railStatus = new Map(records.map((record) => [`${record.rail}|${record.subscriptionId}`, record.railStatus]));
  return (
    <section aria-labelledby="subscriptions">
      <h2 id="subscriptions">Subscriptions</h2>
      {subscriptions.length === 0 ? (
        <Empty>No subscriptions or purchases.</Empty>
      ) : (
        subscriptions.map((sub, i) => (
          <SubscriptionCard
            key={`${sub.rail}|${sub.id}`}
            sub={sub}
            headingId={`subscription-${i}`}
            railStatus={railStatus.get(`${sub.rail}|${sub.id}`) ?? null}
          />
        ))
      )}
    </section>
  );
}

/** A history event in human words. */
const EVENT_WORDS: Record<HistoryEntry['type'], string> = {
  'subscription.started': 'Started',
  'subscription.renewed': 'Renewed',
  'subscription.recovered': 'Recovered from a billing issue',
  'subscription.canceled': 'Auto-renew turned off',
  'subscription.uncanceled': 'Auto-renew turned back on',
  'subscription.billing_issue': 'Billing issue',
  'subscription.paused': 'Paused',
  'subscription.resumed': 'Resumed',
  'subscription.extended': 'Extended',
  'subscription.product_changed': 'Product changed',
  'subscription.price_change': 'Price change',
  'subscription.expired': 'Expired',
  'subscription.refunded': 'Refunded',
  'subscription.refund_reversed': 'Refund reversed',
  'subscription.transferred': 'Transferred',
  'purchase.completed': 'Purchase completed',
  'subscription.consumption_requested': 'Refund request: consumption data asked',
};

/** A detail value: times (fields ending in At) as dates, money objects as money, the rest as text. */
function detailText(key: string, value: unknown): string {
  if (value === null || value === undefined) return 'none';
  if (typeof value === 'number' && /At$|deadline/.test(key)) return date(value);
  if (typeof value === 'object' && 'amountMicros' in value && 'currency' in value) {
    const money = value as { amountMicros: number; currency: string; state?: string };
    return `${money.state ? `${money.state} ` : ''}${micros(money.amountMicros, money.currency)}`;
  }
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

function HistoryItem({ entry }: { entry: HistoryEntry }) {
  const details = Object.entries(entry.details);
  return (
    <li>
      <strong>{EVENT_WORDS[entry.type] ?? entry.type}</strong> <span className="muted">{date(entry.occurredAt)}</span> · {entry.productId} ({entry.rail})
      <br />
      <code>{entry.type}</code>
      {details.length > 0 && <span> · {details.map(([key, value]) => `${key}: ${detailText(key, value)}`).join(' · ')}</span>}{' '}
      <small className="muted">
        subscription {entry.subscriptionId} · audit {entry.auditEventId}
        {entry.railEventId ? ` · rail event ${entry.railEventId}` : ''}
      </small>
    </li>
  );
}

/** The customer's lifecycle events newest first, with a button that reads the next older page. */
export function SubscriptionHistory({
  entries,
  hasMore,
  onOlder,
  pending,
}: {
  entries: HistoryEntry[];
  hasMore: boolean;
  onOlder: () => void;
  pending: boolean;
}) {
  return (
    <>
      {entries.length === 0 ? (
        <Empty>No lifecycle events yet.</Empty>
      ) : (
        <ol className="lifecycle-history" aria-label="Lifecycle events, newest first">
          {entries.map((entry) => (
            <HistoryItem key={entry.id} entry={entry} />
          ))}
        </ol>
      )}
      {entries.length > 0 && (
        <p role="status" className="muted">
          {entries.length} event{entries.length === 1 ? '' : 's'} shown{hasMore ? '; older ones remain' : ', back to the first'}.
        </p>
      )}
      {hasMore && (
        <button type="button" onClick={onOlder} disabled={pending}>
          Show older events
        </button>
      )}
    </>
  );
}

export function Identities({ identities }: { identities: CustomerDetail['identities'] }) {
  return (
    <section aria-labelledby="identities">
      <h2 id="identities">Identities</h2>
      <DataTable
        rows={identities.aliases}
        rowKey={(alias) => `${alias.type}|${alias.value}`}
        caption="Identities"
        captionHidden
        empty="No identities."
        columns={[
          { header: 'Type', cell: (alias) => alias.type },
          { header: 'Id', cell: (alias) => <code>{alias.value}</code> },
          { header: 'Assurance', cell: (alias) => alias.assurance },
          { header: 'Linked', cell: (alias) => date(alias.createdAt) },
        ]}
      />
      {identities.merges.length > 0 && (
        <>
          <h3>Identify conflicts</h3>
          <ul>
            {identities.merges.map((merge) => (
              <li key={merge.id}>
                {merge.role} side, with <code>{merge.otherCustomerId}</code>: <Status value={merge.status} /> ({date(merge.createdAt)})
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

export function Events({ rows }: { rows: CustomerDetail['recentEvents'] }) {
  return (
    <section aria-labelledby="events">
      <h2 id="events">Recent events</h2>
      <DataTable
        rows={rows}
        rowKey={(event) => event.id}
        caption="Recent events"
        captionHidden
        empty="No recent events."
        columns={[
          { header: 'When', cell: (event) => dateMs(event.timestampMs) },
          { header: 'Event', cell: (event) => event.name },
          { header: 'Level', cell: (event) => event.level ?? '—' },
        ]}
      />
    </section>
  );
}
