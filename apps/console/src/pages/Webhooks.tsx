// Outgoing webhooks: endpoints of the project in the current environment (create, open); one
// endpoint: edit, disable / enable, rotate the secret (shown once), send a test, deliveries, retry.
import { useState } from 'react';
import { ApiFailure, api, call } from '../api/client';
import type { WebhookEndpoint } from '../api/types';
import { SecretDialog } from '../components/dialogs';
import { DataTable } from '../components/DataTable';
import { Field, Loaded, MutationStatus, Status, errorFor } from '../components/ui';
import { useLoad } from '../components/useLoad';
import { useMutation } from '../components/useMutation';
import { useEnv } from '../env';
import { date } from '../format';
import { href } from '../router';
import { EndpointEditor } from './WebhookEndpoint';
import { isMissing, useFollowEnv, usePageTitle } from '../components/page';

export function Webhooks({ projectId }: { projectId: string }) {
  usePageTitle('Webhooks');
  const env = useEnv();
  const endpoints = useLoad(
    () => call(api.GET('/admin/v1/projects/{projectId}/webhook-endpoints', { params: { path: { projectId }, query: { env } } })),
    [projectId, env],
  );
  const [created, setCreated] = useState<WebhookEndpoint>();
  return (
    <>
      <h1>Webhooks</h1>
      <CreateEndpoint
        projectId={projectId}
        onCreated={(endpoint) => {
          setCreated(endpoint);
          endpoints.reload();
        }}
      />
      <section aria-labelledby="endpoints">
        <h2 id="endpoints">Endpoints ({env})</h2>
        <Loaded load={endpoints} label="webhook endpoints">
          {(list) => (
            <DataTable
              rows={list.data}
              rowKey={(endpoint) => endpoint.id}
              caption={`Endpoints in ${env}`}
              captionHidden
              empty={`No webhook endpoints in ${env} yet.`}
              columns={[
                { header: 'URL', cell: (endpoint) => <a href={href(`/p/${projectId}/webhooks/${endpoint.id}`)}>{endpoint.url}</a> },
                { header: 'Events', cell: (endpoint) => endpoint.eventTypes.join(', ') },
                { header: 'Status', cell: (endpoint) => <Status value={endpoint.status} /> },
                { header: 'Created', cell: (endpoint) => date(endpoint.createdAt) },
              ]}
            />
          )}
        </Loaded>
      </section>
      {created?.secret && (
        <SecretDialog
          title="Signing secret of the new endpoint"
          secrets={[{ label: 'signing secret', value: created.secret }]}
          onClose={() => setCreated(undefined)}
        />
      )}
    </>
  );
}

function CreateEndpoint({ projectId, onCreated }: { projectId: string; onCreated: (endpoint: WebhookEndpoint) => void }) {
  const env = useEnv();
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const create = useMutation(async () => {
    const body = { url, env, eventTypes: ['*' as const], ...(description ? { description } : {}) };
    onCreated(await call(api.POST('/admin/v1/projects/{projectId}/webhook-endpoints', { params: { path: { projectId } }, body })));
    setUrl('');
    setDescription('');
  });
  const error = create.error;
  const submit = () => {
    if (!/^https?:\/\//.test(url)) return create.fail(new ApiFailure(400, 'invalid_param_value', 'url must be an https URL.', 'url'));
    void create.run();
  };
  return (
    <form
      className="inline-form"
      aria-labelledby="create-endpoint"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
    >
      <h2 id="create-endpoint">New endpoint ({env})</h2>
      <Field label="Endpoint URL" name="url" placeholder="https://example.com/hooks" value={url} onChange={setUrl} error={errorFor(error, 'url')} />
      <Field label="Description" name="description" value={description} onChange={setDescription} error={errorFor(error, 'description')} />
      <MutationStatus mutation={create} fields={['url', 'description']} />
      <button type="submit" className="primary" disabled={create.pending}>
        Create endpoint
      </button>
    </form>
  );
}

/** One endpoint; endpoints belong to one environment: after a switch to the other, the list opens. */
export function WebhookEndpointPage({ projectId, endpointId }: { projectId: string; endpointId: string }) {
  const env = useEnv();
  const path = { params: { path: { endpointId } } };
  const endpoint = useLoad(() => call(api.GET('/admin/v1/webhook-endpoints/{endpointId}', path)), [endpointId]);
  const deliveries = useLoad(() => call(api.GET('/admin/v1/webhook-endpoints/{endpointId}/deliveries', path)), [endpointId]);
  const elsewhere = endpoint.state === 'ready' && endpoint.data.env !== env;
  usePageTitle('Webhook endpoint · Webhooks');
  useFollowEnv(elsewhere || isMissing(endpoint), `Endpoint ${endpointId}`, `/p/${projectId}/webhooks`);
  if (elsewhere)
    return (
      <p role="status">
        Endpoint {endpointId} is not in {env}: opening the list…
      </p>
    );
  return (
    <Loaded load={endpoint} label="the endpoint" missing={<p role="status">Endpoint {endpointId} is not here: opening the list…</p>}>
      {(data) => (
        <EndpointEditor
          projectId={projectId}
          endpoint={data}
          deliveries={deliveries}
          onChanged={() => {
            endpoint.reload();
            deliveries.reload();
          }}
        />
      )}
    </Loaded>
  );
}
