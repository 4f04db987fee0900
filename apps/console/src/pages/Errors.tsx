// Error issues by fingerprint, and one issue with its latest event's symbolicated stack.
import { api, call } from '../api/client';
import type { components } from '../api/operator';
import { DataTable } from '../components/DataTable';
import { isMissing, useFollowEnv, usePageTitle } from '../components/page';
import { Empty, Loaded } from '../components/ui';
import { useLoad } from '../components/useLoad';
import { useEnv } from '../env';
import { date } from '../format';
import { href } from '../router';

type Frame = components['schemas']['ErrorFrameView'];

export function Errors({ projectId }: { projectId: string }) {
  usePageTitle('Errors');
  const env = useEnv();
  const issues = useLoad(
    () => call(api.GET('/admin/v1/projects/{projectId}/error-issues', { params: { path: { projectId }, query: { env } } })),
    [projectId, env],
  );
  return (
    <>
      <h1>Errors</h1>
      <Loaded load={issues} label="error issues">
        {(list) => (
          <DataTable
            rows={list.data}
            rowKey={(issue) => issue.fingerprint}
            caption={`Error issues in ${env}`}
            captionHidden
            empty={`No errors reported in ${env}.`}
            columns={[
              {
                header: 'Issue',
                cell: (issue) => (
                  <>
                    <a href={href(`/p/${projectId}/errors/${encodeURIComponent(issue.fingerprint)}`)}>{issue.lastEventName || issue.fingerprint}</a>
                    <br />
                    <small className="muted">{issue.fingerprint}</small>
                  </>
                ),
              },
              { header: 'Events', cell: (issue) => issue.count, sortValue: (issue) => issue.count },
              { header: 'Affected users', cell: (issue) => issue.affectedUsers, sortValue: (issue) => issue.affectedUsers },
              { header: 'First seen', cell: (issue) => date(issue.firstSeenAt), sortValue: (issue) => issue.firstSeenAt },
              { header: 'Last seen', cell: (issue) => date(issue.lastSeenAt), sortValue: (issue) => issue.lastSeenAt },
            ]}
          />
        )}
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
  usePageTitle(`Issue ${fingerprint} · Errors`);
  useFollowEnv(isMissing(issue), `Issue ${fingerprint}`, `/p/${projectId}/errors`);
  return (
    <>
      <h1>
        Issue <code>{fingerprint}</code>
      </h1>
      <Loaded
        load={issue}
        label="the issue"
        missing={
          <p role="status">
            Issue {fingerprint} is not in {env}: opening the list…
          </p>
        }
      >
        {(data) => (
          <>
            <p>
              {data.count} events, first seen {date(data.firstSeenAt)}, last seen {date(data.lastSeenAt)}
            </p>
            {data.latestEvent?.message && <p className="error-message">{data.latestEvent.message}</p>}
            <h2>Stack of the latest event</h2>
            {!data.latestEvent?.frames?.length ? <Empty>The latest event has no stack.</Empty> : <Stack frames={data.latestEvent.frames} />}
            <h2>Affected users</h2>
            <DataTable
              rows={data.affectedUsers}
              rowKey={(user) => user.serviceCustomerId}
              caption="Affected users"
              captionHidden
              empty="No identified user hit this issue."
              columns={[
                {
                  header: 'Customer',
                  cell: (user) => <a href={href(`/p/${projectId}/customers/${encodeURIComponent(user.serviceCustomerId)}`)}>{user.serviceCustomerId}</a>,
                },
                { header: 'User id', cell: (user) => user.userId ?? '—' },
                { header: 'Events', cell: (user) => user.count },
                { header: 'Last hit', cell: (user) => date(user.lastHitAt) },
              ]}
            />
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
