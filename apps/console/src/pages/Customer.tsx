// A customer: identities (alias graph), entitlements (active and past), rail subscriptions, erasure
// status, recent events (one call); the audit timeline newest first (a second); grant and revoke
// with a reason; refresh from the rails. After an environment switch to one where the customer
// does not exist, the customers list opens instead.
import { api, call } from '../api/client';
import { isMissing, useFollowEnv, usePageTitle } from '../components/page';
import { Empty, Loaded, MutationStatus } from '../components/ui';
import { useLoad } from '../components/useLoad';
import { useMutation } from '../components/useMutation';
import { useEnv } from '../env';
import { date, money } from '../format';
import { Entitlements, Events, Identities, Subscriptions, Traits } from './CustomerPanels';
import { StateBadges } from './customerStates';
import { GrantRevoke } from './GrantRevoke';

export function Customer({ projectId, customerId }: { projectId: string; customerId: string }) {
  const env = useEnv();
  const path = { projectId, customerId };
  const detail = useLoad(() => call(api.GET('/admin/v1/projects/{projectId}/customers/{customerId}', { params: { path, query: { env } } })), [customerId, env]);
  const timeline = useLoad(
    () => call(api.GET('/admin/v1/projects/{projectId}/customers/{customerId}/timeline', { params: { path, query: { env, limit: '50' } } })),
    [customerId, env],
  );
  const person = detail.state === 'ready' ? (detail.data.identities.userId ?? detail.data.traits.email ?? null) : null;
  usePageTitle(`Customer ${customerId}`);
  const missing = isMissing(detail) || isMissing(timeline);
  useFollowEnv(missing, `Customer ${customerId}`, `/p/${projectId}/customers`);
  const reload = () => {
    detail.reload();
    timeline.reload();
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
            <Subscriptions rows={data.subscriptions} />
            <Identities identities={data.identities} />
            <Events rows={data.recentEvents} />
          </>
        )}
      </Loaded>
      {detail.state === 'ready' && <GrantRevoke projectId={projectId} customerId={customerId} onDone={reload} />}
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
