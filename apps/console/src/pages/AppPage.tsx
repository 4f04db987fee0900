// One app: its settings (what GET /v1/config returns) and its keys (rotate, revoke).
import { useState } from 'react';
import { api, call } from '../api/client';
import type { ApiKey, App } from '../api/types';
import { ConfirmDialog, FormDialog, SecretDialog } from '../components/dialogs';
import { Alert, Field, FormAlert, Loaded, Status, errorFor } from '../components/ui';
import { useLoad } from '../components/useLoad';
import { date } from '../format';

export function AppPage({ appId }: { appId: string }) {
  const app = useLoad(() => call(api.GET('/admin/v1/apps/{appId}', { params: { path: { appId } } })), [appId]);
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
  const [rotating, setRotating] = useState<ApiKey>();
  const [revoking, setRevoking] = useState<ApiKey>();
  const [shown, setShown] = useState<ApiKey>();
  const [error, setError] = useState<string>();
  const rotate = async (key: ApiKey) => {
    try {
      const rotation = await call(api.POST('/admin/v1/keys/{keyId}/rotate', { params: { path: { keyId: key.id } }, body: {} }));
      setShown(rotation.key);
      onChanged();
    } catch (failure) {
      setError((failure as Error).message);
    }
    setRotating(undefined);
  };
  return (
    <section aria-labelledby="keys">
      <h2 id="keys">Keys</h2>
      {error && <Alert>{error}</Alert>}
      <table tabIndex={0} className="stack-narrow">
        <thead>
          <tr>
            <th scope="col">Key</th>
            <th scope="col">Kind</th>
            <th scope="col">Env</th>
            <th scope="col">Status</th>
            <th scope="col">Scopes</th>
            <th scope="col">Created</th>
            <th scope="col">Expires</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {keys.map((key) => (
            <tr key={key.id}>
              <td data-label="Key">
                <code>{key.kind === 'publishable' && key.key ? key.key : `…${key.last4}`}</code>
                <br />
                <small className="muted">{key.id}</small>
              </td>
              <td data-label="Kind">{key.kind}</td>
              <td data-label="Env">{key.env}</td>
              <td data-label="Status">
                <Status value={key.status} />
              </td>
              <td data-label="Scopes">{key.scopes?.join(', ') || '—'}</td>
              <td data-label="Created">{date(key.createdAt)}</td>
              <td data-label="Expires">{date(key.expiresAt)}</td>
              <td data-label="Actions" className="row-actions">
                {key.status === 'active' && (
                  <>
                    <button type="button" onClick={() => setRotating(key)} aria-label={`Rotate ${key.kind} ${key.env} key ending ${key.last4}`}>
                      Rotate
                    </button>
                    <button
                      type="button"
                      className="danger"
                      onClick={() => setRevoking(key)}
                      aria-label={`Revoke ${key.kind} ${key.env} key ending ${key.last4}`}
                    >
                      Revoke
                    </button>
                  </>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {rotating && (
        <FormDialog title={`Rotate the ${rotating.kind} ${rotating.env} key …${rotating.last4}?`} onClose={() => setRotating(undefined)}>
          <p>A new key is minted; the old one keeps working for 7 days, then fails closed.</p>
          <div className="actions">
            <button type="button" onClick={() => setRotating(undefined)}>
              Cancel
            </button>
            <button type="button" className="primary" onClick={() => void rotate(rotating)}>
              Rotate key
            </button>
          </div>
        </FormDialog>
      )}
      {revoking && (
        <ConfirmDialog
          title={`Revoke the key …${revoking.last4}?`}
          expected={revoking.id}
          action="Revoke key"
          onClose={() => setRevoking(undefined)}
          onConfirm={async () => {
            await call(api.POST('/admin/v1/keys/{keyId}/revoke', { params: { path: { keyId: revoking.id } } }));
            onChanged();
          }}
        >
          <p>The next request with this key is refused (401 key_revoked). This cannot be undone.</p>
        </ConfirmDialog>
      )}
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
  const [error, setError] = useState<unknown>();
  const [saved, setSaved] = useState(false);
  const save = async () => {
    setError(undefined);
    setSaved(false);
    const body = {
      name,
      allowedOrigins: list(origins),
      ...(app.platform === 'ios' ? { bundleId } : {}),
      ...(app.platform === 'android' ? { packageName } : {}),
      ...(sdkMinVersion ? { sdkMinVersion } : {}),
      sdkDeprecatedVersions: list(deprecated),
      verifierConfig: { logVerifierResults: logResults, verifyContractsAtBoot: verifyAtBoot },
    };
    try {
      await call(api.PATCH('/admin/v1/apps/{appId}', { params: { path: { appId: app.id } }, body }));
      setSaved(true);
      onSaved();
    } catch (failure) {
      setError(failure);
    }
  };
  const fields = ['name', 'allowedOrigins', 'bundleId', 'packageName', 'sdkMinVersion', 'sdkDeprecatedVersions', 'verifierConfig'];
  return (
    <form
      aria-labelledby="settings"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        void save();
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
      <FormAlert error={error} fields={fields} />
      {saved && <Alert kind="info">Saved.</Alert>}
      <button type="submit" className="primary">
        Save settings
      </button>
    </form>
  );
}
