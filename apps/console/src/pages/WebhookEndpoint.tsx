// One webhook endpoint: settings, disable / enable, rotate secret, send test, deliveries with retry.
import { useState } from 'react';
import { api, call } from '../api/client';
import type { WebhookDelivery, WebhookEndpoint } from '../api/types';
import { SecretDialog } from '../components/dialogs';
import { Alert, Empty, Field, FormAlert, Loaded, Status, errorFor } from '../components/ui';
import type { Load } from '../components/useLoad';
import { date } from '../format';

interface Props {
  endpoint: WebhookEndpoint;
  deliveries: Load<{ data: WebhookDelivery[] }>;
  onChanged: () => void;
}

export function EndpointEditor({ endpoint, deliveries, onChanged }: Props) {
  const endpointId = endpoint.id;
  const path = { params: { path: { endpointId } } };
  const [url, setUrl] = useState(endpoint.url);
  const [description, setDescription] = useState(endpoint.description ?? '');
  const [error, setError] = useState<unknown>();
  const [note, setNote] = useState<string>();
  const [secret, setSecret] = useState<string>();
  const attempt = async (work: () => Promise<string | void>) => {
    setError(undefined);
    setNote(undefined);
    try {
      const done = await work();
      if (done) setNote(done);
      onChanged();
    } catch (failure) {
      setError(failure);
    }
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
        <FormAlert error={error} fields={['url', 'description']} />
        {note && <Alert kind="info">{note}</Alert>}
        <div className="actions">
          <button type="submit" className="primary">
            Save
          </button>
          <button type="button" onClick={() => void patch({ status: endpoint.status === 'enabled' ? 'disabled' : 'enabled' }, 'Status changed.')}>
            {endpoint.status === 'enabled' ? 'Disable' : 'Enable'}
          </button>
          <button
            type="button"
            onClick={() =>
              void attempt(async () => {
                const rotated = await call(api.POST('/admin/v1/webhook-endpoints/{endpointId}/rotate-secret', path));
                setSecret(rotated.secret);
              })
            }
          >
            Rotate secret
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
      <section aria-labelledby="deliveries">
        <h2 id="deliveries">Deliveries</h2>
        <Loaded load={deliveries} label="deliveries">
          {(list) =>
            list.data.length === 0 ? (
              <Empty>No deliveries yet: send a test.</Empty>
            ) : (
              <table tabIndex={0}>
                <thead>
                  <tr>
                    <th scope="col">Created</th>
                    <th scope="col">Event</th>
                    <th scope="col">Status</th>
                    <th scope="col">Attempts</th>
                    <th scope="col">Last answer</th>
                    <th scope="col">Actions</th>
                  </tr>
                </thead>
                <tbody>
                  {list.data.map((delivery) => (
                    <tr key={delivery.id}>
                      <td>{date(delivery.createdAt)}</td>
                      <td>{delivery.eventType}</td>
                      <td>
                        <Status value={delivery.status} />
                      </td>
                      <td>{delivery.attempts}</td>
                      <td>{delivery.lastStatusCode ?? delivery.lastError ?? '—'}</td>
                      <td>
                        {delivery.status === 'dead' && (
                          <button
                            type="button"
                            onClick={() =>
                              void attempt(async () => {
                                await call(api.POST('/admin/v1/webhook-deliveries/{deliveryId}/retry', { params: { path: { deliveryId: delivery.id } } }));
                                return 'Delivery queued again.';
                              })
                            }
                          >
                            Retry
                          </button>
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
      {secret && <SecretDialog title="The new signing secret" secrets={[{ label: 'signing secret', value: secret }]} onClose={() => setSecret(undefined)} />}
    </>
  );
}
