// Dead background jobs, with retry.
import { api, call } from '../api/client';
import { DataTable } from '../components/DataTable';
import { Loaded, MutationStatus } from '../components/ui';
import { useLoad } from '../components/useLoad';
import { useMutation } from '../components/useMutation';
import { dateMs } from '../format';
import { usePageTitle } from '../components/page';

export function Jobs() {
  usePageTitle('Dead jobs');
  const jobs = useLoad(() => call(api.GET('/admin/v1/jobs', { params: { query: { status: 'dead' } } })), []);
  const retry = useMutation(
    async (jobId: string) => {
      await call(api.POST('/admin/v1/jobs/{jobId}/retry', { params: { path: { jobId } } }));
      return `Job ${jobId} queued again.`;
    },
    { reload: jobs.reload },
  );
  return (
    <>
      <h1>Dead jobs</h1>
      <MutationStatus mutation={retry} failed="Retry failed" />
      <Loaded load={jobs} label="jobs">
        {(list) => (
          <DataTable
            rows={list.data}
            rowKey={(job) => job.id}
            caption="Dead jobs"
            captionHidden
            empty="No dead jobs. Everything ran."
            columns={[
              { header: 'Job', cell: (job) => <code>{job.id}</code> },
              { header: 'Type', cell: (job) => job.type },
              { header: 'Project / env', cell: (job) => `${job.projectId} / ${job.env}` },
              { header: 'Attempts', cell: (job) => `${job.attempts} / ${job.maxAttempts}` },
              { header: 'Last error', cell: (job) => job.lastError },
              { header: 'Updated', cell: (job) => dateMs(job.updatedAtMs) },
              {
                header: 'Actions',
                cell: (job) => (
                  <button type="button" onClick={() => void retry.run(job.id)} disabled={retry.pending} aria-label={`Retry job ${job.id}`}>
                    Retry
                  </button>
                ),
              },
            ]}
          />
        )}
      </Loaded>
    </>
  );
}
