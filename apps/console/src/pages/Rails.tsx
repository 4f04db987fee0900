// Each rail: settings, whether its secrets are configured (never the secrets), the webhook URL to
// paste into the store's console, and the latest notifications with their decision.
import { raw } from '../api/client';
import type { List } from '../api/types';
import { Empty, Loaded, Status } from '../components/ui';
import { useLoad } from '../components/useLoad';
import { useEnv } from '../env';
import { date } from '../format';

interface RailNotification {
  id?: string;
  notificationId?: string;
  type?: string;
  notificationType?: string;
  decision?: string;
  receivedAt?: number;
  createdAt?: number;
}

interface Rail {
  rail: string;
  enabled: boolean;
  secretsConfigured: boolean | Record<string, boolean>;
  webhookUrl?: string;
  latestNotifications?: RailNotification[];
  notifications?: RailNotification[];
  [setting: string]: unknown;
}

const SHOWN_APART = new Set(['rail', 'enabled', 'secretsConfigured', 'webhookUrl', 'latestNotifications', 'notifications', 'object']);

export function Rails({ projectId }: { projectId: string }) {
  const env = useEnv();
  const rails = useLoad(() => raw<List<Rail>>('GET', `/admin/v1/projects/${projectId}/rails`, { query: { env } }), [projectId, env]);
  return (
    <>
      <h1>Rails</h1>
      <Loaded load={rails} label="rails">
        {(list) =>
          list.data.length === 0 ? (
            <Empty>No rail is configured for this project.</Empty>
          ) : (
            list.data.map((rail) => {
              const notifications = rail.latestNotifications ?? rail.notifications ?? [];
              const webhookUrl = rail.webhookUrl ?? `${window.location.origin}/v1/webhooks/${rail.rail}/${projectId}`;
              return (
                <section key={rail.rail} aria-labelledby={`rail-${rail.rail}`} className="card">
                  <h2 id={`rail-${rail.rail}`}>
                    {rail.rail} <Status value={rail.enabled ? 'enabled' : 'disabled'} />
                  </h2>
                  <dl>
                    <dt>Secrets configured</dt>
                    <dd>
                      {typeof rail.secretsConfigured === 'boolean'
                        ? rail.secretsConfigured
                          ? 'yes'
                          : 'no'
                        : Object.entries(rail.secretsConfigured)
                            .map(([name, set]) => `${name}: ${set ? 'yes' : 'no'}`)
                            .join(', ')}
                    </dd>
                    <dt>Webhook URL</dt>
                    <dd>
                      <code>{webhookUrl}</code>
                    </dd>
                    {Object.entries(rail)
                      .filter(([name]) => !SHOWN_APART.has(name))
                      .map(([name, value]) => (
                        <div key={name} className="dl-row">
                          <dt>{name}</dt>
                          <dd>{Array.isArray(value) ? `${value.length} item(s)` : String(value ?? '—')}</dd>
                        </div>
                      ))}
                  </dl>
                  <h3>Latest notifications</h3>
                  {notifications.length === 0 ? (
                    <Empty>No notifications received yet.</Empty>
                  ) : (
                    <table>
                      <thead>
                        <tr>
                          <th scope="col">Received</th>
                          <th scope="col">Type</th>
                          <th scope="col">Decision</th>
                        </tr>
                      </thead>
                      <tbody>
                        {notifications.map((n, index) => (
                          <tr key={n.id ?? n.notificationId ?? index}>
                            <td>{date(n.receivedAt ?? n.createdAt)}</td>
                            <td>{n.type ?? n.notificationType ?? '—'}</td>
                            <td>{n.decision ?? '—'}</td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  )}
                </section>
              );
            })
          )
        }
      </Loaded>
    </>
  );
}
