// A customer: identities, entitlements (active and past), subscriptions, erasure status, recent
// events, the audit timeline newest first; grant / revoke with a reason; refresh from the rails.
import { useState } from 'react';
import { raw } from '../api/client';
import type { CustomerDetail, CustomerEntitlement, List, TimelineEntry } from '../api/types';
import { Alert, Empty, Loaded } from '../components/ui';
import { useLoad } from '../components/useLoad';
import { useEnv } from '../env';
import { date } from '../format';
import { GrantRevoke } from './GrantRevoke';

function entitlementsOf(detail: CustomerDetail): { active: CustomerEntitlement[]; past: CustomerEntitlement[] } {
  const value = detail.entitlements;
  if (Array.isArray(value)) return { active: value.filter((e) => e.active !== false), past: value.filter((e) => e.active === false) };
  return { active: value?.active ?? [], past: value?.past ?? [] };
}

function Json({ value }: { value: unknown }) {
  return <pre className="json">{JSON.stringify(value, null, 2)}</pre>;
}

function Entitlements({ title, rows }: { title: string; rows: CustomerEntitlement[] }) {
  return (
    <>
      <h3>{title}</h3>
      {rows.length === 0 ? (
        <Empty>None.</Empty>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Source</th>
              <th scope="col">Valid until</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row, index) => (
              <tr key={(row.key ?? row.entitlementKey ?? '') + index}>
                <td>{row.key ?? row.entitlementKey}</td>
                <td>{typeof row.source === 'object' ? JSON.stringify(row.source) : String(row.source ?? '—')}</td>
                <td>{row.validUntil ? date(row.validUntil) : 'no end'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

export function Customer({ projectId, customerId }: { projectId: string; customerId: string }) {
  const env = useEnv();
  const base = `/admin/v1/projects/${projectId}/customers/${encodeURIComponent(customerId)}`;
  const detail = useLoad(() => raw<CustomerDetail>('GET', base, { query: { env } }), [base, env]);
  const timeline = useLoad(() => raw<List<TimelineEntry>>('GET', `${base}/timeline`, { query: { env, limit: 50 } }), [base, env]);
  const [refreshNote, setRefreshNote] = useState<string>();
  const reload = () => {
    detail.reload();
    timeline.reload();
  };
  const refresh = async () => {
    try {
      await raw('POST', `${base}/refresh`, { query: { env } });
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
        {(data) => {
          const { active, past } = entitlementsOf(data);
          return (
            <div className="grid">
              <section aria-labelledby="entitlements">
                <h2 id="entitlements">Entitlements</h2>
                <Entitlements title="Active" rows={active} />
                <Entitlements title="Past" rows={past} />
              </section>
              <section aria-labelledby="identities">
                <h2 id="identities">Identities</h2>
                <Json value={data.identities ?? { userId: data.userId, crossdeckCustomerId: data.crossdeckCustomerId }} />
                <h3>Erasure</h3>
                <p>{String((data.erasureStatus ?? data.erasure ?? 'none') as string)}</p>
              </section>
              <section aria-labelledby="subscriptions">
                <h2 id="subscriptions">Subscriptions</h2>
                {data.subscriptions?.length ? <Json value={data.subscriptions} /> : <Empty>No rail subscriptions.</Empty>}
              </section>
              <section aria-labelledby="events">
                <h2 id="events">Recent events</h2>
                {data.recentEvents?.length ? <Json value={data.recentEvents} /> : <Empty>No recent events.</Empty>}
              </section>
            </div>
          );
        }}
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
                {list.data.map((entry, index) => (
                  <li key={String(entry.id ?? entry.eventId ?? index)}>
                    <strong>{entry.kind ?? entry.type ?? entry.action}</strong>{' '}
                    <span className="muted">{date(entry.at ?? entry.createdAt ?? (entry.atMs ? Math.floor(entry.atMs / 1000) : undefined))}</span>
                    {entry.reason && <span> — {entry.reason}</span>}
                    <details>
                      <summary>Details</summary>
                      <Json value={entry} />
                    </details>
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
