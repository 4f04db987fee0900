// One app: its settings (what GET /v1/config returns) and its keys (rotate, revoke).
import { useState } from 'react';
import { api, call } from '../api/client';
import type { ApiKey, App } from '../api/types';
import { DataTable } from '../components/DataTable';
import { ConfirmAction, SecretDialog } from '../components/dialogs';
import { Field, Loaded, MutationStatus, Status, errorFor } from '../components/ui';
import { useLoad } from '../components/useLoad';
import { useMutation } from '../components/useMutation';
import { date } from '../format';
import { usePageTitle } from '../components/page';

export function AppPage({ appId }: { appId: string }) {
  const app = useLoad(() => call(api.GET('/admin/v1/apps/{appId}', { params: { path: { appId } } })), [appId]);
  usePageTitle(app.state === 'ready' ? `${app.data.name} · Apps` : 'App');
  return (
    <Loaded load={app} label="the app">
      {(data) => (
        <>
          <h1>{data.name}</h1>
          <p className="muted">
            {data.platform} app <code>{data.id}</code>
          </p>
          <Keys keys={data.keys} onChanged={app.reload} />
          <Settings app={data} onSaved={app.reload} />
        </>
      )}
    </Loaded>
  );
}

function Keys({ keys, onChanged }: { keys: ApiKey[]; onChanged: () => void }) {
  const [shown, setShown] = useState<ApiKey>();
  const rotate = async (key: ApiKey) => {
    const rotation = await call(api.POST('/admin/v1/keys/{keyId}/rotate', { params: { path: { keyId: key.id } }, body: {} }));
    setShown(rotation.key);
    onChanged();
  };
  const revoke = async (key: ApiKey) => {
    await call(api.POST('/admin/v1/keys/{keyId}/revoke', { params: { path: { keyId: key.id } } }));
    onChanged();
  };
  const named = (key: ApiKey) => `${key.kind} ${key.env} key ending ${key.last4}`;
  return (
    <section aria-labelledby="keys">
      <h2 id="keys">Keys</h2>
      <DataTable
        rows={keys}
        rowKey={(key) => key.id}
        caption="Keys of this app"
        captionHidden
        empty="This app has no keys."
        stackNarrow
        columns={[
          {
            header: 'Key',
            cell: (key) => (
              <>
                <code>{key.kind === 'publishable' && key.key ? key.key : `…${key.last4}`}</code>
                <br />
                <small className="muted">{key.id}</small>
              </>
            ),
          },
          { header: 'Kind', cell: (key) => key.kind },
          { header: 'Env', cell: (key) => key.env },
          { header: 'Status', cell: (key) => <Status value={key.status} /> },
          { header: 'Scopes', cell: (key) => key.scopes?.join(', ') || '—' },
          { header: 'Created', cell: (key) => date(key.createdAt) },
          { header: 'Expires', cell: (key) => date(key.expiresAt) },
          {
            header: 'Actions',
            className: 'row-actions',
            cell: (key) =>
              key.status === 'active' && (
                <>
                  <ConfirmAction
                    label="Rotate"
                    className=""
                    name={`Rotate ${named(key)}`}
                    tone="primary"
                    title={`Rotate the ${key.kind} ${key.env} key …${key.last4}?`}
                    action="Rotate key"
                    onConfirm={() => rotate(key)}
                  >
                    <p>A new key is minted; the old one keeps working for 7 days, then fails closed.</p>
                  </ConfirmAction>
                  <ConfirmAction
                    label="Revoke"
                    name={`Revoke ${named(key)}`}
                    title={`Revoke the key …${key.last4}?`}
                    expected={key.id}
                    action="Revoke key"
                    onConfirm={() => revoke(key)}
                  >
                    <p>The next request with this key is refused (401 key_revoked). This cannot be undone.</p>
                  </ConfirmAction>
                </>
              ),
          },
        ]}
      />
      {shown?.key && (
        <SecretDialog title="The new key" secrets={[{ label: `${shown.kind} ${shown.env}`, value: shown.key }]} onClose={() => setShown(undefined)} />
      )}
    </section>
  );
}

const list = (text: string) => text.split(/[\s,]+/).filter(Boolean);

function Settings({ app, onSaved }: { app: App; onSaved: () => void }) {
  const [name, setName] = useState(app.name);
  const [origins, setOrigins] = useState(app.allowedOrigins.join(' '));
  const [bundleId, setBundleId] = useState(app.bundleId ?? '');
  const [packageName, setPackageName] = useState(app.packageName ?? '');
  const [sdkMinVersion, setSdkMinVersion] = useState(app.sdkMinVersion ?? '');
  const [deprecated, setDeprecated] = useState((app.sdkDeprecatedVersions ?? []).join(' '));
  const [logResults, setLogResults] = useState(Boolean(app.verifierConfig?.logVerifierResults));
  const [verifyAtBoot, setVerifyAtBoot] = useState(Boolean(app.verifierConfig?.verifyContractsAtBoot));
  const save = useMutation(
    async () => {
      const body = {
        name,
        allowedOrigins: list(origins),
        ...(app.platform === 'ios' ? { bundleId } : {}),
        ...(app.platform === 'android' ? { packageName } : {}),
        ...(sdkMinVersion ? { sdkMinVersion } : {}),
        sdkDeprecatedVersions: list(deprecated),
        verifierConfig: { logVerifierResults: logResults, verifyContractsAtBoot: verifyAtBoot },
      };
      await call(api.PATCH('/admin/v1/apps/{appId}', { params: { path: { appId: app.id } }, body }));
      return 'Saved.';
    },
    { reload: onSaved },
  );
  const error = save.error;
  const fields = ['name', 'allowedOrigins', 'bundleId', 'packageName', 'sdkMinVersion', 'sdkDeprecatedVersions', 'verifierConfig'];
  return (
    <form
      aria-labelledby="settings"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        void save.run();
      }}
    >
      <h2 id="settings">Settings</h2>
      <Field label="Name" name="name" value={name} onChange={setName} error={errorFor(error, 'name')} />
      <Field
        label="Allowed origins"
        name="allowedOrigins"
        hint="Space-separated"
        value={origins}
        onChange={setOrigins}
        error={errorFor(error, 'allowedOrigins')}
      />
      {app.platform === 'ios' && <Field label="Bundle id" name="bundleId" value={bundleId} onChange={setBundleId} error={errorFor(error, 'bundleId')} />}
      {app.platform === 'android' && (
        <Field label="Package name" name="packageName" value={packageName} onChange={setPackageName} error={errorFor(error, 'packageName')} />
      )}
      <Field
        label="SDK floor (minimum version)"
        name="sdkMinVersion"
        value={sdkMinVersion}
        onChange={setSdkMinVersion}
        error={errorFor(error, 'sdkMinVersion')}
      />
      <Field
        label="Deprecated SDK versions"
        name="sdkDeprecatedVersions"
        hint="Space-separated"
        value={deprecated}
        onChange={setDeprecated}
        error={errorFor(error, 'sdkDeprecatedVersions')}
      />
      <fieldset>
        <legend>Verifier</legend>
        <label className="check">
          <input type="checkbox" checked={logResults} onChange={(event) => setLogResults(event.target.checked)} /> Log verifier results
        </label>
        <label className="check">
          <input type="checkbox" checked={verifyAtBoot} onChange={(event) => setVerifyAtBoot(event.target.checked)} /> Verify contracts at boot
        </label>
      </fieldset>
      <MutationStatus mutation={save} fields={fields} />
      <button type="submit" className="primary" disabled={save.pending}>
        Save settings
      </button>
    </form>
  );
}
