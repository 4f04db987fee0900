// Error issues by fingerprint, and one issue with its latest event's symbolicated stack.
import { api, call } from '../api/client';
import type { components } from '../api/operator';
import { Empty, Loaded } from '../components/ui';
import { useLoad } from '../components/useLoad';
import { useEnv } from '../env';
import { date } from '../format';
import { href } from '../router';

type Frame = components['schemas']['ErrorFrameView'];

export function Errors({ projectId }: { projectId: string }) {
  const env = useEnv();
  const issues = useLoad(
    () => call(api.GET('/admin/v1/projects/{projectId}/error-issues', { params: { path: { projectId }, query: { env } } })),
    [projectId, env],
  );
  return (
    <>
      <h1>Errors</h1>
      <Loaded load={issues} label="error issues">
        {(list) =>
          list.data.length === 0 ? (
            <Empty>No errors reported in {env}.</Empty>
          ) : (
            <table tabIndex={0}>
              <thead>
                <tr>
                  <th scope="col">Issue</th>
                  <th scope="col">Events</th>
                  <th scope="col">Affected users</th>
                  <th scope="col">First seen</th>
                  <th scope="col">Last seen</th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((issue) => (
                  <tr key={issue.fingerprint}>
                    <td>
                      <a href={href(`/p/${projectId}/errors/${encodeURIComponent(issue.fingerprint)}`)}>{issue.lastEventName || issue.fingerprint}</a>
                      <br />
                      <small className="muted">{issue.fingerprint}</small>
                    </td>
                    <td>{issue.count}</td>
                    <td>{issue.affectedUsers}</td>
                    <td>{date(issue.firstSeenAt)}</td>
                    <td>{date(issue.lastSeenAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Loaded>
    </>
  );
}

export function ErrorIssue({ projectId, fingerprint }: { projectId: string; fingerprint: string }) {
  const env = useEnv();
  const issue = useLoad(
    () => call(api.GET('/admin/v1/projects/{projectId}/error-issues/{fingerprint}', { params: { path: { projectId, fingerprint }, query: { env } } })),
    [projectId, fingerprint, env],
  );
  return (
    <>
      <h1>
        Issue <code>{fingerprint}</code>
      </h1>
      <Loaded load={issue} label="the issue">
        {(data) => (
          <>
            <p>
              {data.count} events, first seen {date(data.firstSeenAt)}, last seen {date(data.lastSeenAt)}
            </p>
            {data.latestEvent?.message && <p className="error-message">{data.latestEvent.message}</p>}
            <h2>Stack of the latest event</h2>
            {!data.latestEvent?.frames?.length ? <Empty>The latest event has no stack.</Empty> : <Stack frames={data.latestEvent.frames} />}
            <h2>Affected users</h2>
            {data.affectedUsers.length === 0 ? (
              <Empty>No identified user hit this issue.</Empty>
            ) : (
              <table tabIndex={0}>
                <thead>
                  <tr>
                    <th scope="col">Customer</th>
                    <th scope="col">User id</th>
                    <th scope="col">Events</th>
                    <th scope="col">Last hit</th>
                  </tr>
                </thead>
                <tbody>
                  {data.affectedUsers.map((user) => (
                    <tr key={user.serviceCustomerId}>
                      <td>
                        <a href={href(`/p/${projectId}/customers/${encodeURIComponent(user.serviceCustomerId)}`)}>{user.serviceCustomerId}</a>
                      </td>
                      <td>{user.userId ?? '—'}</td>
                      <td>{user.count}</td>
                      <td>{date(user.lastHitAt)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </>
        )}
      </Loaded>
    </>
  );
}

function Stack({ frames }: { frames: Frame[] }) {
  return (
    <ol className="stack">
      {frames.map((frame, index) => {
        const original = frame.original ?? undefined;
        return (
          <li key={index} className={frame.in_app ? 'in-app' : undefined}>
            {original ? (
              <>
                <strong>{original.name || frame.function || '(anonymous)'}</strong>{' '}
                <span className="frame-location">
                  {original.source}:{original.line}:{original.column}
                </span>
                {original.contextLine && <pre className="context-line">{original.contextLine}</pre>}
                <small className="muted">
                  minified: {frame.filename}:{frame.lineno}:{frame.colno}
                </small>
              </>
            ) : (
              <>
                <strong>{frame.function || '(anonymous)'}</strong>{' '}
                <span className="frame-location">
                  {frame.filename}:{frame.lineno}:{frame.colno}
                </span>{' '}
                <small className="muted">(no source map)</small>
              </>
            )}
          </li>
        );
      })}
    </ol>
  );
}
