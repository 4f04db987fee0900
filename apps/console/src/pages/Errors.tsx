// Error issues by fingerprint, and one issue with its latest event's symbolicated stack.
import { raw } from '../api/client';
import type { List } from '../api/types';
import type { components } from '../api/operator';
import { Empty, Loaded } from '../components/ui';
import { useLoad } from '../components/useLoad';
import { useEnv } from '../env';
import { date } from '../format';
import { href } from '../router';

type Issue = components['schemas']['ErrorIssueView'] & { affectedUsers?: number; affectedCustomers?: number; status?: string };
type Frame = components['schemas']['ErrorFrameView'];
interface IssueDetail {
  issue?: Issue;
  fingerprint?: string;
  latestEvent?: { message?: string; name?: string; frames?: Frame[]; stack?: Frame[] } | null;
  frames?: Frame[];
  [field: string]: unknown;
}

export function Errors({ projectId }: { projectId: string }) {
  const env = useEnv();
  const issues = useLoad(() => raw<List<Issue>>('GET', `/admin/v1/projects/${projectId}/error-issues`, { query: { env } }), [projectId, env]);
  return (
    <>
      <h1>Errors</h1>
      <Loaded load={issues} label="error issues">
        {(list) =>
          list.data.length === 0 ? (
            <Empty>No errors reported in {env}.</Empty>
          ) : (
            <table>
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
                    <td>{issue.affectedUsers ?? issue.affectedCustomers ?? 'not measured'}</td>
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
    () => raw<IssueDetail>('GET', `/admin/v1/projects/${projectId}/error-issues/${encodeURIComponent(fingerprint)}`, { query: { env } }),
    [projectId, fingerprint, env],
  );
  return (
    <>
      <h1>
        Issue <code>{fingerprint}</code>
      </h1>
      <Loaded load={issue} label="the issue">
        {(data) => {
          const frames = data.latestEvent?.frames ?? data.latestEvent?.stack ?? data.frames ?? [];
          return (
            <>
              {data.issue && (
                <p>
                  {data.issue.count} events, first seen {date(data.issue.firstSeenAt)}, last seen {date(data.issue.lastSeenAt)}
                </p>
              )}
              {data.latestEvent?.message && <p className="error-message">{data.latestEvent.message}</p>}
              <h2>Stack of the latest event</h2>
              {frames.length === 0 ? <Empty>The latest event has no stack.</Empty> : <Stack frames={frames} />}
            </>
          );
        }}
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
