// Each rail: settings, whether its secrets are configured (never the secrets), the webhook URL to
// paste into the store's console, and the latest notifications with their decision.
import type { components } from '../api/operator';
import { api, call } from '../api/client';
import { DataTable } from '../components/DataTable';
import { Loaded, Status } from '../components/ui';
import { useLoad } from '../components/useLoad';
import { useEnv } from '../env';
import { href } from '../router';
import { usePageTitle } from '../components/page';

type RailPanel = components['schemas']['RailPanelView'];

const yesNo = (value: boolean | null) => (value === null ? 'not needed' : value ? 'configured' : 'not configured');

function Panel({ projectId, rail }: { projectId: string; rail: RailPanel }) {
  const settings = Object.entries(rail.settings ?? {});
  return (
    <section aria-labelledby={`rail-${rail.rail}`} className="card">
      <h2 id={`rail-${rail.rail}`}>
        {rail.rail} <Status value={rail.configured ? 'enabled' : 'disabled'} />
      </h2>
      <dl>
        <dt>Webhook URL (paste it into the store's console)</dt>
        <dd>
          <code>{rail.webhookUrl}</code>
        </dd>
        <dt>Secrets</dt>
        <dd>
          webhook signing: {yesNo(rail.secrets.webhook)} · read access: {yesNo(rail.secrets.read)}
        </dd>
        <dt>Settings</dt>
        <dd>
          {settings.length === 0
            ? 'none saved'
            : settings.map(([name, value]) => (
                <div key={name}>
                  {name}: <code>{Array.isArray(value) ? `${value.length} item(s)` : String(value)}</code>
                </div>
              ))}
        </dd>
      </dl>
      <h3>Latest notifications</h3>
      <DataTable
        rows={rail.notifications}
        rowKey={(n) => n.id}
        caption={`Latest notifications of ${rail.rail}`}
        captionHidden
        empty="No notifications received in this environment yet."
        columns={[
          { header: 'Notification', cell: (n) => <code>{n.id}</code> },
          { header: 'Decision', cell: (n) => <Status value={n.decision} /> },
          {
            header: 'Customer',
            cell: (n) => (n.customerId ? <a href={href(`/p/${projectId}/customers/${encodeURIComponent(n.customerId)}`)}>{n.customerId}</a> : '—'),
          },
        ]}
      />
      {rail.notificationsHasMore && <p className="muted">Older notifications are not shown.</p>}
    </section>
  );
}

export function Rails({ projectId }: { projectId: string }) {
  usePageTitle('Rails');
  const env = useEnv();
  const rails = useLoad(() => call(api.GET('/admin/v1/projects/{projectId}/rails', { params: { path: { projectId }, query: { env } } })), [projectId, env]);
  return (
    <>
      <h1>Rails</h1>
      <Loaded load={rails} label="rails">
        {(list) => list.rails.map((rail) => <Panel key={rail.rail} projectId={projectId} rail={rail} />)}
      </Loaded>
    </>
  );
}
