// A customer: identities (alias graph), entitlements (active and past), its subscriptions with
// their lifecycle, erasure status, recent events (one call); the subscription history newest
// first, older pages on demand (a second); the audit timeline newest first (a third);
// grant and revoke with a reason; refresh from the rails. After an environment switch to one
// where the customer does not exist, the customers list opens instead.
import { useState } from 'react';
import { api, call } from '../api/client';
import type { HistoryPage } from '../api/types';
import { isMissing, useFollowEnv, usePageTitle } from '../components/page';
import { Empty, Loaded, MutationStatus } from '../components/ui';
import { useLoad } from '../components/useLoad';
import { useMutation } from '../components/useMutation';
import { type Env, useEnv } from '../env';
import { date, money } from '../format';
import { Entitlements, Events, Identities, SubscriptionHistory, Subscriptions, Traits } from './CustomerPanels';
import { StateBadges } from './customerStates';
import { GrantRevoke } from './GrantRevoke';

/** Lifecycle events per page of the subscription history. */
const HISTORY_PAGE = 10;

/** The subscription history's first page, and the older pages read since ("Show older events"). */
function useHistory(projectId: string, customerId: string, env: Env) {
  const path = { projectId, customerId };
  const read = (before?: string) =>
    call(
      api.GET('/admin/v1/projects/{projectId}/customers/{customerId}/history', {
        params: { path, query: { env, limit: String(HISTORY_PAGE), ...(before ? { before } : {}) } },
      }),
    );
  const first = useLoad(() => read(), [customerId, env]);
  const key = `${customerId}|${env}`;
  const [older, setOlder] = useState<{ key: string; pages: HistoryPage[] }>({ key, pages: [] });
  const pages = older.key === key ? older.pages : [];
  const last = pages.length > 0 ? pages[pages.length - 1] : first.state === 'ready' ? first.data : undefined;
  const more = useMutation(async () => {
    const before = last?.data[last.data.length - 1]?.id;
    if (!before) return;
    const page = await read(before);
    setOlder({ key, pages: [...pages, page] });
  });
  const reload = () => {
    setOlder({ key, pages: [] });
    first.reload();
  };
  return { first, entries: pages.flatMap((page) => page.data), hasMore: last?.hasMore ?? false, more, reload };
}

export function Customer({ projectId, customerId }: { projectId: string; customerId: string }) {
  const env = useEnv();
  const path = { projectId, customerId };
  const detail = useLoad(() => call(api.GET('/admin/v1/projects/{projectId}/customers/{customerId}', { params: { path, query: { env } } })), [customerId, env]);
  const timeline = useLoad(
    () => call(api.GET('/admin/v1/projects/{projectId}/customers/{customerId}/timeline', { params: { path, query: { env, limit: '50' } } })),
    [customerId, env],
  );
  const history = useHistory(projectId, customerId, env);
  const person = detail.state === 'ready' ? (detail.data.identities.userId ?? detail.data.traits.email ?? null) : null;
  usePageTitle(`Customer ${customerId}`);
  const missing = isMissing(detail) || isMissing(timeline) || isMissing(history.first);
  useFollowEnv(missing, `Customer ${customerId}`, `/p/${projectId}/customers`);
  const reload = () => {
    detail.reload();
    timeline.reload();
    history.reload();
  };
  const refresh = useMutation(
    async () => {
      await call(api.POST('/admin/v1/projects/{projectId}/customers/{customerId}/refresh', { params: { path, query: { env } } }));
      return 'Refreshed from the rails.';
    },
    { reload },
  );
  return (
    <>
      <h1>{detail.state === 'ready' ? (person ?? 'Anonymous customer') : 'Customer'}</h1>
      {detail.state === 'ready' && (
        <p className="person">
          {detail.data.identities.userId && detail.data.traits.email && <span>{detail.data.traits.email}</span>}
          <span className="badge badge-mrr">MRR {money(detail.data.summary.mrr.amountMinor, detail.data.summary.mrr.currency)}</span>
          {detail.data.summary.paying && <span className="badge badge-active">Paying</span>}
          <StateBadges states={detail.data.summary.states} />
          <code>{customerId}</code>
        </p>
      )}
      <button type="button" onClick={() => void refresh.run()} disabled={refresh.pending || detail.state !== 'ready'}>
        Refresh from the rails
      </button>
      <MutationStatus mutation={refresh} failed="Refresh failed" />
      <Loaded
        load={detail}
        label="the customer"
        missing={
          <p role="status">
            Customer {customerId} is not in {env}: opening the list…
          </p>
        }
      >
        {(data) => (
          <>
            <p className="muted">
              Since {date(data.createdAt)} · last seen {data.summary.lastSeenDay ?? 'never'}
              {data.forgotten ? ' · forgotten' : ''}
              {data.erasure ? ` · erasure ${data.erasure.status}` : ' · no erasure requested'}
            </p>
            <Traits traits={data.traits} />
            <Entitlements rows={data.entitlements} />
            <Subscriptions subscriptions={data.subscriptionObjects} records={data.subscriptions} />
            <Identities identities={data.identities} />
            <Events rows={data.recentEvents} />
          </>
        )}
      </Loaded>
      {detail.state === 'ready' && <GrantRevoke projectId={projectId} customerId={customerId} onDone={reload} />}
      <section aria-labelledby="history">
        <h2 id="history">Subscription history</h2>
        <Loaded load={history.first} label="the subscription history" missing={null}>
          {(first) => (
            <>
              <SubscriptionHistory
                entries={[...first.data, ...history.entries]}
                hasMore={history.hasMore}
                onOlder={() => void history.more.run()}
                pending={history.more.pending}
              />
              <MutationStatus mutation={history.more} failed="Could not load older events" />
            </>
          )}
        </Loaded>
      </section>
      <section aria-labelledby="timeline">
        <h2 id="timeline">Timeline</h2>
        <Loaded load={timeline} label="the timeline" missing={null}>
          {(list) =>
            list.data.length === 0 ? (
              <Empty>Nothing recorded yet.</Empty>
            ) : (
              <ol className="timeline">
                {list.data.map((entry) => (
                  <li key={entry.eventId}>
                    <strong>{entry.eventType}</strong> <span className="muted">{date(entry.createdAt)}</span> · {entry.rail} · {entry.decision}
                    <br />
                    <span>{entry.reason}</span> <small className="muted">by {entry.actor}</small>
                  </li>
                ))}
              </ol>
            )
          }
        </Loaded>
      </section>
    </>
  );
}
