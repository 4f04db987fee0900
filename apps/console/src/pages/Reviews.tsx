// Review queues: identify conflicts (approve / dismiss, each confirmed first: neither can be undone)
// and erasures.
import { api, call } from '../api/client';
import { DataTable } from '../components/DataTable';
import { ConfirmAction } from '../components/dialogs';
import { Loaded, MutationStatus, Status } from '../components/ui';
import { useLoad } from '../components/useLoad';
import { useMutation } from '../components/useMutation';
import { useEnv } from '../env';
import { date, dateMs } from '../format';
import { usePageTitle } from '../components/page';

export function Reviews({ projectId }: { projectId: string }) {
  usePageTitle('Review queues');
  const env = useEnv();
  const reviews = useLoad(
    () => call(api.GET('/admin/v1/projects/{projectId}/merge-reviews', { params: { path: { projectId }, query: { env } } })),
    [projectId, env],
  );
  const erasures = useLoad(
    () => call(api.GET('/admin/v1/projects/{projectId}/erasures', { params: { path: { projectId }, query: { env } } })),
    [projectId, env],
  );
  const act = useMutation<[string, 'approve' | 'dismiss']>(
    async (reviewId: string, action: 'approve' | 'dismiss') => {
      const params = { params: { path: { projectId, reviewId } } };
      if (action === 'approve') await call(api.POST('/admin/v1/projects/{projectId}/merge-reviews/{reviewId}/approve', params));
      else await call(api.POST('/admin/v1/projects/{projectId}/merge-reviews/{reviewId}/dismiss', params));
      return `Review ${reviewId} ${action === 'approve' ? 'approved' : 'dismissed'}.`;
    },
    { reload: reviews.reload, onError: 'throw' },
  );
  return (
    <>
      <h1>Review queues</h1>
      <MutationStatus mutation={act} failed="Failed" />
      <section aria-labelledby="merge-reviews">
        <h2 id="merge-reviews">Identify conflicts</h2>
        <Loaded load={reviews} label="merge reviews">
          {(list) => (
            <DataTable
              rows={list.data}
              rowKey={(review) => review.id}
              caption={`Identify conflicts in ${env}`}
              captionHidden
              empty={`No conflicts waiting for review in ${env}.`}
              columns={[
                { header: 'Queued', cell: (review) => date(review.createdAt) },
                { header: 'User id', cell: (review) => review.developerUserId },
                { header: 'Anonymous id', cell: (review) => review.anonymousId },
                { header: 'Kept customer', cell: (review) => <code>{review.canonicalCustomerId}</code> },
                { header: 'Other customer', cell: (review) => <code>{review.otherCustomerId}</code> },
                { header: 'Status', cell: (review) => <Status value={review.status} /> },
                {
                  header: 'Actions',
                  className: 'row-actions',
                  cell: (review) =>
                    review.status === 'pending' && (
                      <>
                        <ConfirmAction
                          label="Approve"
                          name={`Approve merge of ${review.developerUserId}`}
                          tone="primary"
                          title={`Merge the customers of ${review.developerUserId}?`}
                          action="Approve merge"
                          onConfirm={() => act.run(review.id, 'approve')}
                        >
                          <p>
                            <code>{review.otherCustomerId}</code> (anonymous id {review.anonymousId}) becomes part of <code>{review.canonicalCustomerId}</code>:
                            its aliases, subscriptions, entitlements and events move over. This cannot be undone.
                          </p>
                        </ConfirmAction>
                        <ConfirmAction
                          label="Dismiss"
                          className=""
                          name={`Dismiss merge of ${review.developerUserId}`}
                          title={`Dismiss the conflict of ${review.developerUserId}?`}
                          action="Dismiss conflict"
                          onConfirm={() => act.run(review.id, 'dismiss')}
                        >
                          <p>
                            <code>{review.otherCustomerId}</code> and <code>{review.canonicalCustomerId}</code> stay two customers and the review closes. This
                            cannot be undone.
                          </p>
                        </ConfirmAction>
                      </>
                    ),
                },
              ]}
            />
          )}
        </Loaded>
      </section>
      <section aria-labelledby="erasures">
        <h2 id="erasures">Erasures</h2>
        <Loaded load={erasures} label="erasures">
          {(list) => (
            <DataTable
              rows={list.data}
              rowKey={(erasure) => erasure.serviceCustomerId}
              caption={`Erasures in ${env}`}
              captionHidden
              empty={`No erasure requests in ${env}.`}
              columns={[
                { header: 'Customer', cell: (erasure) => <code>{erasure.serviceCustomerId}</code> },
                { header: 'Queued', cell: (erasure) => dateMs(erasure.queuedAt) },
                { header: 'Status', cell: (erasure) => <Status value={erasure.status} /> },
              ]}
            />
          )}
        </Loaded>
      </section>
    </>
  );
}
