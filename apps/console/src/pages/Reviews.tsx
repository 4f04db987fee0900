// Review queues: identify conflicts (approve / dismiss) and erasures.
import { useState } from 'react';
import { api, call } from '../api/client';
import { Alert, Empty, Loaded, Status } from '../components/ui';
import { useLoad } from '../components/useLoad';
import { useEnv } from '../env';
import { date, dateMs } from '../format';

export function Reviews({ projectId }: { projectId: string }) {
  const env = useEnv();
  const reviews = useLoad(
    () => call(api.GET('/admin/v1/projects/{projectId}/merge-reviews', { params: { path: { projectId }, query: { env } } })),
    [projectId, env],
  );
  const erasures = useLoad(
    () => call(api.GET('/admin/v1/projects/{projectId}/erasures', { params: { path: { projectId }, query: { env } } })),
    [projectId, env],
  );
  const [note, setNote] = useState<string>();
  const act = async (reviewId: string, action: 'approve' | 'dismiss') => {
    try {
      const params = { params: { path: { projectId, reviewId } } };
      if (action === 'approve') await call(api.POST('/admin/v1/projects/{projectId}/merge-reviews/{reviewId}/approve', params));
      else await call(api.POST('/admin/v1/projects/{projectId}/merge-reviews/{reviewId}/dismiss', params));
      setNote(`Review ${reviewId} ${action === 'approve' ? 'approved' : 'dismissed'}.`);
      reviews.reload();
    } catch (failure) {
      setNote('Failed: ' + (failure as Error).message);
    }
  };
  return (
    <>
      <h1>Review queues</h1>
      {note && <Alert kind={note.startsWith('Failed') ? 'error' : 'info'}>{note}</Alert>}
      <section aria-labelledby="merge-reviews">
        <h2 id="merge-reviews">Identify conflicts</h2>
        <Loaded load={reviews} label="merge reviews">
          {(list) =>
            list.data.length === 0 ? (
              <Empty>No conflicts waiting for review in {env}.</Empty>
            ) : (
              <table tabIndex={0}>
                <thead>
                  <tr>
                    <th scope="col">Queued</th>
                    <th scope="col">User id</th>
                    <th scope="col">Anonymous id</th>
                    <th scope="col">Kept customer</th>
                    <th scope="col">Other customer</th>
                    <th scope="col">Status</th>
                    <th scope="col">Actions</th>
                  </tr>
                </thead>
                <tbody>
                  {list.data.map((review) => (
                    <tr key={review.id}>
                      <td>{date(review.createdAt)}</td>
                      <td>{review.developerUserId}</td>
                      <td>{review.anonymousId}</td>
                      <td>
                        <code>{review.canonicalCustomerId}</code>
                      </td>
                      <td>
                        <code>{review.otherCustomerId}</code>
                      </td>
                      <td>
                        <Status value={review.status} />
                      </td>
                      <td className="row-actions">
                        {review.status === 'pending' && (
                          <>
                            <button
                              type="button"
                              className="primary"
                              onClick={() => void act(review.id, 'approve')}
                              aria-label={`Approve merge of ${review.developerUserId}`}
                            >
                              Approve
                            </button>
                            <button type="button" onClick={() => void act(review.id, 'dismiss')} aria-label={`Dismiss merge of ${review.developerUserId}`}>
                              Dismiss
                            </button>
                          </>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )
          }
        </Loaded>
      </section>
      <section aria-labelledby="erasures">
        <h2 id="erasures">Erasures</h2>
        <Loaded load={erasures} label="erasures">
          {(list) =>
            list.data.length === 0 ? (
              <Empty>No erasure requests in {env}.</Empty>
            ) : (
              <table tabIndex={0}>
                <thead>
                  <tr>
                    <th scope="col">Customer</th>
                    <th scope="col">Queued</th>
                    <th scope="col">Status</th>
                  </tr>
                </thead>
                <tbody>
                  {list.data.map((erasure) => (
                    <tr key={erasure.serviceCustomerId}>
                      <td>
                        <code>{erasure.serviceCustomerId}</code>
                      </td>
                      <td>{dateMs(erasure.queuedAt)}</td>
                      <td>
                        <Status value={erasure.status} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )
          }
        </Loaded>
      </section>
    </>
  );
}
