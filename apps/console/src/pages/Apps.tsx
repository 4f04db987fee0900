// A project's apps (create mints four keys: the secret ones shown once) and its key activity log.
import { useState } from 'react';
import { ApiFailure, api, call } from '../api/client';
import type { App } from '../api/types';
import { SecretDialog } from '../components/dialogs';
import { DataTable } from '../components/DataTable';
import { Empty, Field, Loaded, MutationStatus, Select, errorFor } from '../components/ui';
import { useLoad } from '../components/useLoad';
import { useMutation } from '../components/useMutation';
import { date } from '../format';
import { href } from '../router';
import { usePageTitle } from '../components/page';

const PLATFORMS = ['web', 'ios', 'android'] as const;

export function Apps({ projectId }: { projectId: string }) {
  usePageTitle('Apps and keys');
  const apps = useLoad(() => call(api.GET('/admin/v1/projects/{projectId}/apps', { params: { path: { projectId } } })), [projectId]);
  const activity = useLoad(() => call(api.GET('/admin/v1/projects/{projectId}/key-activity', { params: { path: { projectId } } })), [projectId]);
  const [created, setCreated] = useState<App>();
  return (
    <>
      <h1>Apps and keys</h1>
      <CreateApp
        projectId={projectId}
        onCreated={(app) => {
          setCreated(app);
          apps.reload();
          activity.reload();
        }}
      />
      <section aria-labelledby="apps-list">
        <h2 id="apps-list">Apps</h2>
        <Loaded load={apps} label="apps">
          {(list) =>
            list.data.length === 0 ? (
              <Empty>No apps in this project yet.</Empty>
            ) : (
              <ul className="cards">
                {list.data.map((app) => (
                  <li key={app.id}>
                    <a href={href(`/p/${projectId}/apps/${app.id}`)}>{app.name}</a> <span className="muted">{app.platform}</span> <code>{app.id}</code>
                  </li>
                ))}
              </ul>
            )
          }
        </Loaded>
      </section>
      <section aria-labelledby="key-activity">
        <h2 id="key-activity">Key activity</h2>
        <Loaded load={activity} label="key activity">
          {(list) => (
            <DataTable
              rows={list.data}
              rowKey={(entry) => entry.keyId + entry.action + entry.at}
              caption="Key activity"
              captionHidden
              empty="No key activity yet."
              columns={[
                { header: 'When', cell: (entry) => date(entry.at) },
                { header: 'Key', cell: (entry) => <code>{entry.keyId}</code> },
                { header: 'Action', cell: (entry) => entry.action },
                { header: 'Request', cell: (entry) => <code>{entry.requestId}</code> },
              ]}
            />
          )}
        </Loaded>
      </section>
      {created && (
        <SecretDialog
          title={`Keys of ${created.name}`}
          note="The secret keys are shown only once. Copy them now; publishable keys stay visible on the app page."
          secrets={created.keys.filter((key) => key.key).map((key) => ({ label: `${key.kind} ${key.env}`, value: key.key! }))}
          onClose={() => setCreated(undefined)}
        />
      )}
    </>
  );
}

function CreateApp({ projectId, onCreated }: { projectId: string; onCreated: (app: App) => void }) {
  const [name, setName] = useState('');
  const [platform, setPlatform] = useState<(typeof PLATFORMS)[number]>('web');
  const [lock, setLock] = useState('');
  const [origins, setOrigins] = useState('');
  const lockField = platform === 'ios' ? 'bundleId' : 'packageName';
  const create = useMutation(async () => {
    const body = {
      name: name.trim(),
      platform,
      ...(platform === 'ios' ? { bundleId: lock.trim() } : {}),
      ...(platform === 'android' ? { packageName: lock.trim() } : {}),
      allowedOrigins: origins.split(/[\s,]+/).filter(Boolean),
    };
    onCreated(await call(api.POST('/admin/v1/projects/{projectId}/apps', { params: { path: { projectId } }, body })));
    setName('');
    setLock('');
    setOrigins('');
  });
  const error = create.error;
  const submit = () => {
    if (!name.trim()) return create.fail(new ApiFailure(400, 'missing_required_param', 'name is required (1 to 100 characters).', 'name'));
    if (platform !== 'web' && !lock.trim())
      return create.fail(new ApiFailure(400, 'missing_required_param', `${lockField} is required for ${platform} apps.`, lockField));
    void create.run();
  };
  return (
    <form
      className="inline-form"
      aria-labelledby="create-app"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
    >
      <h2 id="create-app">New app</h2>
      <Field label="App name" name="name" value={name} onChange={setName} error={errorFor(error, 'name')} />
      <Select label="Platform" name="platform" value={platform} options={PLATFORMS} onChange={(value) => setPlatform(value as typeof platform)} />
      {platform !== 'web' && (
        <Field label={platform === 'ios' ? 'Bundle id' : 'Package name'} name={lockField} value={lock} onChange={setLock} error={errorFor(error, lockField)} />
      )}
      {platform === 'web' && (
        <Field
          label="Allowed origins"
          name="allowedOrigins"
          hint="Space- or comma-separated, e.g. https://app.example.com https://*.example.com"
          value={origins}
          onChange={setOrigins}
          error={errorFor(error, 'allowedOrigins')}
        />
      )}
      <MutationStatus mutation={create} fields={['name', lockField, 'allowedOrigins']} />
      <button type="submit" className="primary" disabled={create.pending}>
        Create app
      </button>
    </form>
  );
}
