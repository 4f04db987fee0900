// A customer: identities (alias graph), entitlements (active and past), rail subscriptions, erasure
// status, recent events (one call); the audit timeline newest first (a second); grant and revoke
// with a reason; refresh from the rails.
import { useState } from 'react';
import { api, call } from '../api/client';
import { Alert, Empty, Loaded } from '../components/ui';
import { useLoad } from '../components/useLoad';
import { useEnv } from '../env';
import { date } from '../format';
import { Entitlements, Events, Identities, Subscriptions } from './CustomerPanels';
import { GrantRevoke } from './GrantRevoke';

export function Customer({ projectId, customerId }: { projectId: string; customerId: string }) {
  const env = useEnv();
  const path = { projectId, customerId };
  const detail = useLoad(() => call(api.GET('/admin/v1/projects/{projectId}/customers/{customerId}', { params: { path, query: { env } } })), [customerId, env]);
  const timeline = useLoad(
    () => call(api.GET('/admin/v1/projects/{projectId}/customers/{customerId}/timeline', { params: { path, query: { env, limit: '50' } } })),
    [customerId, env],
  );
  const [refreshNote, setRefreshNote] = useState<string>();
  const reload = () => {
    detail.reload();
    timeline.reload();
  };
  const refresh = async () => {
    try {
      await call(api.POST('/admin/v1/projects/{projectId}/customers/{customerId}/refresh', { params: { path, query: { env } } }));
      setRefreshNote('Refreshed from the rails.');
      reload();
    } catch (failure) {
      setRefreshNote('Refresh failed: ' + (failure as Error).message);
    }
  };
  return (
    <>
      <h1>
        Customer <code>{customerId}</code>
      </h1>
      <button type="button" onClick={() => void refresh()}>
        Refresh from the rails
      </button>
      {refreshNote && <Alert kind={refreshNote.startsWith('Refresh failed') ? 'error' : 'info'}>{refreshNote}</Alert>}
      <Loaded load={detail} label="the customer">
        {(data) => (
          <>
            <p className="muted">
              {data.traits.email ?? 'no email'}
              {data.traits.firstName ? ` · ${data.traits.firstName}` : ''} · since {date(data.createdAt)}
              {data.forgotten ? ' · forgotten' : ''}
              {data.erasure ? ` · erasure ${data.erasure.status}` : ' · no erasure requested'}
            </p>
            <Entitlements rows={data.entitlements} />
            <Subscriptions rows={data.subscriptions} />
            <Identities identities={data.identities} />
            <Events rows={data.recentEvents} />
          </>
        )}
      </Loaded>
      <GrantRevoke projectId={projectId} customerId={customerId} onDone={reload} />
      <section aria-labelledby="timeline">
        <h2 id="timeline">Timeline</h2>
        <Loaded load={timeline} label="the timeline">
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
