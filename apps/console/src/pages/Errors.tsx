// Error issues titled by exception, sorted and paged on the server; one issue with its events
// (each with its symbolicated stack) and the users it hit, paged, with their total.
import { useState } from 'react';
import { api, call } from '../api/client';
import type { components } from '../api/operator';
import { DataTable } from '../components/DataTable';
import { isMissing, useFollowEnv, usePageTitle } from '../components/page';
import { Empty, Loaded, Status } from '../components/ui';
import { Pager, useCursorPages } from '../components/useCursorPages';
import { useLoad } from '../components/useLoad';
import { useEnv } from '../env';
import { date, dateMs, money } from '../format';
import { href } from '../router';

type Frame = components['schemas']['ErrorFrameView'];

const SORTS = [
  { value: 'last_seen', label: 'Last seen' },
  { value: 'count', label: 'Events' },
  { value: 'users', label: 'Affected users' },
  { value: 'revenue_at_risk', label: 'Revenue at risk' },
  { value: 'first_seen', label: 'First seen' },
] as const;
type IssueSort = (typeof SORTS)[number]['value'];
const ISSUES_PER_PAGE = 25;
const EVENTS_PER_PAGE = 5;
const USERS_PER_PAGE = 50;

export function Errors({ projectId }: { projectId: string }) {
  usePageTitle('Errors');
  const env = useEnv();
  const [sort, setSort] = useState<IssueSort>('last_seen');
  const issues = useCursorPages(
    (after) =>
      call(
        api.GET('/admin/v1/projects/{projectId}/error-issues', {
          params: { path: { projectId }, query: { env, sort, limit: String(ISSUES_PER_PAGE), after } },
        }),
      ),
    [projectId, env, sort],
  );
  return (
    <>
      <h1>Errors</h1>
      <div className="field">
        <label htmlFor="issue-sort">Sort by (most first)</label>
        <select id="issue-sort" name="sort" value={sort} onChange={(event) => setSort(event.target.value as IssueSort)}>
          {SORTS.map((option) => (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ))}
        </select>
      </div>
      <Loaded load={issues.page} label="error issues">
        {(list) => (
          <>
            <DataTable
              rows={list.data}
              rowKey={(issue) => issue.fingerprint}
              caption={`Error issues in ${env}, by ${SORTS.find((s) => s.value === sort)?.label.toLowerCase()}, most first`}
              captionHidden
              stackNarrow
              empty={`No errors reported in ${env}.`}
              columns={[
                {
                  header: 'Issue',
                  className: 'issue-title',
                  cell: (issue) => (
                    <>
                      <a href={href(`/p/${projectId}/errors/${encodeURIComponent(issue.fingerprint)}`)}>{issue.title}</a>
                      <br />
                      <small className="muted">
                        {issue.lastEventName} · {issue.fingerprint}
                      </small>
                    </>
                  ),
                },
                { header: 'Level', cell: (issue) => <Status value={issue.lastLevel ?? 'unknown'} /> },
                { header: 'Events', cell: (issue) => issue.count },
                { header: 'Affected users', cell: (issue) => issue.affectedUsers },
                {
                  header: 'Revenue at risk (monthly)',
                  cell: (issue) => money(issue.revenueAtRisk.amountMinor, issue.revenueAtRisk.currency),
                  className: 'num',
                },
                { header: 'First seen', cell: (issue) => date(issue.firstSeenAt) },
                { header: 'Last seen', cell: (issue) => date(issue.lastSeenAt) },
              ]}
            />
            <Pager label="Error issues" index={issues.index} nextCursor={list.nextCursor} onNext={issues.next} onPrevious={issues.previous} />
          </>
        )}
      </Loaded>
    </>
  );
}

export function ErrorIssue({ projectId, fingerprint }: { projectId: string; fingerprint: string }) {
  const env = useEnv();
  const path = { projectId, fingerprint };
  const issue = useLoad(
    () => call(api.GET('/admin/v1/projects/{projectId}/error-issues/{fingerprint}', { params: { path, query: { env } } })),
    [projectId, fingerprint, env],
  );
  const events = useCursorPages(
    (after) =>
      call(
        api.GET('/admin/v1/projects/{projectId}/error-issues/{fingerprint}/events', {
          params: { path, query: { env, limit: String(EVENTS_PER_PAGE), after } },
        }),
      ),
    [projectId, fingerprint, env],
  );
  const users = useCursorPages(
    (after) =>
      call(
        api.GET('/admin/v1/projects/{projectId}/error-issues/{fingerprint}/users', {
          params: { path, query: { env, limit: String(USERS_PER_PAGE), after } },
        }),
      ),
    [projectId, fingerprint, env],
  );
  const title = issue.state === 'ready' ? issue.data.title : undefined;
  usePageTitle(`${title ?? `Issue ${fingerprint}`} · Errors`);
  useFollowEnv(isMissing(issue), `Issue ${fingerprint}`, `/p/${projectId}/errors`);
  return (
    <>
      <h1 className="issue-title">{title ?? <>Issue {fingerprint}</>}</h1>
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
              <Status value={data.lastLevel ?? 'unknown'} /> <code>{fingerprint}</code> · {data.lastEventName} · {data.count} events, first seen{' '}
              {date(data.firstSeenAt)}, last seen {date(data.lastSeenAt)}
            </p>
            <h2>Events</h2>
            <Loaded load={events.page} label="the events">
              {(page) => (
                <>
                  {page.data.length === 0 ? (
                    <Empty>Retention has dropped every event of this issue.</Empty>
                  ) : (
                    <ol className="issue-events">
                      {page.data.map((event) => (
                        <li key={event.eventId}>
                          <h3>
                            {dateMs(event.timestamp)} <Status value={event.level ?? 'unknown'} />
                          </h3>
                          <p>
                            {event.errorType && <strong>{event.errorType}: </strong>}
                            {event.message ?? <span className="muted">no message</span>}
                            {event.release && <small className="muted"> · release {event.release}</small>}
                          </p>
                          {event.frames.length === 0 ? <Empty>This event has no stack.</Empty> : <Stack frames={event.frames} />}
                        </li>
                      ))}
                    </ol>
                  )}
                  <Pager label="Events" index={events.index} nextCursor={page.nextCursor} onNext={events.next} onPrevious={events.previous} />
                </>
              )}
            </Loaded>
            <h2>Affected users</h2>
            <Loaded load={users.page} label="the affected users">
              {(page) => (
                <>
                  <DataTable
                    rows={page.data}
                    rowKey={(user) => user.userId}
                    caption="Affected users"
                    captionHidden
                    stackNarrow
                    empty="No identified user hit this issue."
                    columns={[
                      { header: 'User id', cell: (user) => user.userId },
                      {
                        header: 'Customer',
                        cell: (user) =>
                          user.serviceCustomerId ? (
                            <a href={href(`/p/${projectId}/customers/${encodeURIComponent(user.serviceCustomerId)}`)}>{user.serviceCustomerId}</a>
                          ) : (
                            '—'
                          ),
                      },
                      { header: 'Events', cell: (user) => user.count },
                      { header: 'Last hit', cell: (user) => date(user.lastHitAt) },
                    ]}
                  />
                  <Pager
                    label="Affected users"
                    index={users.index}
                    nextCursor={page.nextCursor}
                    onNext={users.next}
                    onPrevious={users.previous}
                    summary={page.total === 0 ? undefined : usersShown(users.index, page.data.length, page.total)}
                  />
                </>
              )}
            </Loaded>
          </>
        )}
      </Loaded>
    </>
  );
}

/** "Users 51–81 of 81": which of the total this page shows. */
function usersShown(index: number, shown: number, total: number): string {
  const from = index * USERS_PER_PAGE + 1;
  return shown === 0 ? `0 of ${total} users` : `Users ${from}–${from + shown - 1} of ${total}`;
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
