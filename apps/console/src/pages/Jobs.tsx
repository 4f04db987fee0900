// Dead background jobs, with retry.
import { useState } from 'react';
import { api, call } from '../api/client';
import { Alert, Empty, Loaded } from '../components/ui';
import { useLoad } from '../components/useLoad';
import { dateMs } from '../format';

export function Jobs() {
  const jobs = useLoad(() => call(api.GET('/admin/v1/jobs', { params: { query: { status: 'dead' } } })), []);
  const [note, setNote] = useState<string>();
  const retry = async (jobId: string) => {
    try {
      await call(api.POST('/admin/v1/jobs/{jobId}/retry', { params: { path: { jobId } } }));
      setNote(`Job ${jobId} queued again.`);
      jobs.reload();
    } catch (failure) {
      setNote('Retry failed: ' + (failure as Error).message);
    }
  };
  return (
    <>
      <h1>Dead jobs</h1>
      {note && <Alert kind={note.startsWith('Retry failed') ? 'error' : 'info'}>{note}</Alert>}
      <Loaded load={jobs} label="jobs">
        {(list) =>
          list.data.length === 0 ? (
            <Empty>No dead jobs. Everything ran.</Empty>
          ) : (
            <table tabIndex={0}>
              <thead>
                <tr>
                  <th scope="col">Job</th>
                  <th scope="col">Type</th>
                  <th scope="col">Project / env</th>
                  <th scope="col">Attempts</th>
                  <th scope="col">Last error</th>
                  <th scope="col">Updated</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((job) => (
                  <tr key={job.id}>
                    <td>
                      <code>{job.id}</code>
                    </td>
                    <td>{job.type}</td>
                    <td>
                      {job.projectId} / {job.env}
                    </td>
                    <td>
                      {job.attempts} / {job.maxAttempts}
                    </td>
                    <td>{job.lastError}</td>
                    <td>{dateMs(job.updatedAtMs)}</td>
                    <td>
                      <button type="button" onClick={() => void retry(job.id)} aria-label={`Retry job ${job.id}`}>
                        Retry
                      </button>
                    </td>
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
