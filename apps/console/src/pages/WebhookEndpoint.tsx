// One webhook endpoint: settings, disable / enable, rotate secret and delete (both confirmed first),
// send test, deliveries with retry.
import { useContext, useState } from 'react';
import { api, call } from '../api/client';
import type { WebhookDelivery, WebhookEndpoint } from '../api/types';
import { ConfirmAction, SecretDialog } from '../components/dialogs';
import { DataTable } from '../components/DataTable';
import { NoticeContext } from '../components/page';
import { Field, Loaded, MutationStatus, Status, errorFor } from '../components/ui';
import type { Load } from '../components/useLoad';
import { useMutation } from '../components/useMutation';
import { date } from '../format';
import { navigate } from '../router';

interface Props {
  projectId: string;
  endpoint: WebhookEndpoint;
  deliveries: Load<{ data: WebhookDelivery[] }>;
  onChanged: () => void;
}

export function EndpointEditor({ projectId, endpoint, deliveries, onChanged }: Props) {
  const endpointId = endpoint.id;
  const path = { params: { path: { endpointId } } };
  const [url, setUrl] = useState(endpoint.url);
  const [description, setDescription] = useState(endpoint.description ?? '');
  const [secret, setSecret] = useState<string>();
  const change = useMutation((work: () => Promise<string | void>) => work(), { reload: onChanged });
  const attempt = (work: () => Promise<string | void>) => change.run(work);
  const error = change.error;
  const notice = useContext(NoticeContext);
  const remove = async () => {
    await call(api.DELETE('/admin/v1/webhook-endpoints/{endpointId}', path));
    notice(`Endpoint ${endpoint.url} deleted.`, `/p/${projectId}/webhooks`);
    navigate(`/p/${projectId}/webhooks`, { replace: true });
  };
  const patch = (body: Record<string, unknown>, done: string) =>
    attempt(async () => {
      await call(api.PATCH('/admin/v1/webhook-endpoints/{endpointId}', { ...path, body }));
      return done;
    });
  return (
    <>
      <h1>Webhook endpoint</h1>
      <p>
        <code>{endpoint.id}</code> <Status value={endpoint.status} /> {endpoint.env}
      </p>
      <form
        aria-labelledby="endpoint-settings"
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          void patch({ url, description }, 'Saved.');
        }}
      >
        <h2 id="endpoint-settings">Settings</h2>
        <Field label="Endpoint URL" name="url" value={url} onChange={setUrl} error={errorFor(error, 'url')} />
        <Field label="Description" name="description" value={description} onChange={setDescription} error={errorFor(error, 'description')} />
        <MutationStatus mutation={change} fields={['url', 'description']} />
        <div className="actions">
          <button type="submit" className="primary" disabled={change.pending}>
            Save
          </button>
          <button type="button" onClick={() => void patch({ status: endpoint.status === 'enabled' ? 'disabled' : 'enabled' }, 'Status changed.')}>
            {endpoint.status === 'enabled' ? 'Disable' : 'Enable'}
          </button>
          <button
            type="button"
            onClick={() =>
              void attempt(async () => {
                await call(api.POST('/admin/v1/webhook-endpoints/{endpointId}/test', path));
                return 'Test event queued.';
              })
            }
          >
            Send test
          </button>
        </div>
      </form>
      <div className="actions">
        <ConfirmAction
          label="Rotate secret"
          className=""
          tone="primary"
          title={`Rotate the signing secret of ${endpoint.url}?`}
          action="Rotate secret"
          onConfirm={async () => {
            const rotated = await call(api.POST('/admin/v1/webhook-endpoints/{endpointId}/rotate-secret', path));
            setSecret(rotated.secret);
            onChanged();
          }}
        >
          <p>Deliveries are signed with the new secret at once: the receiver's configuration must change with it. This cannot be undone.</p>
        </ConfirmAction>
        <ConfirmAction label="Delete endpoint" title={`Delete the endpoint ${endpoint.url}?`} action="Delete endpoint" onConfirm={remove}>
          <p>Its pending deliveries are cancelled and nothing more is sent to it. This cannot be undone.</p>
        </ConfirmAction>
      </div>
      <section aria-labelledby="deliveries">
        <h2 id="deliveries">Deliveries</h2>
        <Loaded load={deliveries} label="deliveries">
          {(list) => (
            <DataTable
              rows={list.data}
              rowKey={(delivery) => delivery.id}
              caption="Deliveries"
              captionHidden
              empty="No deliveries yet: send a test."
              columns={[
                { header: 'Created', cell: (delivery) => date(delivery.createdAt) },
                { header: 'Event', cell: (delivery) => delivery.eventType },
                { header: 'Status', cell: (delivery) => <Status value={delivery.status} /> },
                { header: 'Attempts', cell: (delivery) => delivery.attempts },
                { header: 'Last answer', cell: (delivery) => delivery.lastStatusCode ?? delivery.lastError ?? '—' },
                {
                  header: 'Actions',
                  cell: (delivery) =>
                    delivery.status === 'dead' && (
                      <button
                        type="button"
                        disabled={change.pending}
                        onClick={() =>
                          void attempt(async () => {
                            await call(api.POST('/admin/v1/webhook-deliveries/{deliveryId}/retry', { params: { path: { deliveryId: delivery.id } } }));
                            return 'Delivery queued again.';
                          })
                        }
                      >
                        Retry
                      </button>
                    ),
                },
              ]}
            />
          )}
        </Loaded>
      </section>
      {secret && <SecretDialog title="The new signing secret" secrets={[{ label: 'signing secret', value: secret }]} onClose={() => setSecret(undefined)} />}
    </>
  );
}
