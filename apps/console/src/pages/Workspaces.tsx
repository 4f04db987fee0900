// Workspaces (what the CLI and the assistant connector sign in to) and their keys: create (shown
// once), revoke with a typed confirmation; attach a project.
import { useState } from 'react';
import { ApiFailure, api, call } from '../api/client';
import type { Workspace, WorkspaceKey } from '../api/types';
import { ConfirmDialog, SecretDialog } from '../components/dialogs';
import { Empty, Field, FormAlert, Loaded, Status, errorFor } from '../components/ui';
import { useLoad } from '../components/useLoad';
import { date } from '../format';

export function Workspaces() {
  const workspaces = useLoad(() => call(api.GET('/admin/v1/workspaces')), []);
  const [name, setName] = useState('');
  const [error, setError] = useState<unknown>();
  const create = async () => {
    setError(undefined);
    if (!name.trim()) return setError(new ApiFailure(400, 'missing_required_param', 'name is required (1 to 100 characters).', 'name'));
    try {
      await call(api.POST('/admin/v1/workspaces', { body: { name: name.trim() } }));
      setName('');
      workspaces.reload();
    } catch (failure) {
      setError(failure);
    }
  };
  return (
    <>
      <h1>Workspaces</h1>
      <form
        className="inline-form"
        aria-labelledby="create-workspace"
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          void create();
        }}
      >
        <h2 id="create-workspace">New workspace</h2>
        <Field label="Workspace name" name="name" value={name} onChange={setName} error={errorFor(error, 'name')} />
        <FormAlert error={error} fields={['name']} />
        <button type="submit" className="primary">
          Create workspace
        </button>
      </form>
      <Loaded load={workspaces} label="workspaces">
        {(list) =>
          list.data.length === 0 ? <Empty>No workspaces yet.</Empty> : list.data.map((workspace) => <WorkspaceCard key={workspace.id} workspace={workspace} />)
        }
      </Loaded>
    </>
  );
}

/** A workspace; its keys are read when opened, so the page stays at one call however many workspaces there are. */
function WorkspaceCard({ workspace }: { workspace: Workspace }) {
  const [open, setOpen] = useState(false);
  return (
    <section className="card" aria-labelledby={`ws-${workspace.id}`}>
      <h2 id={`ws-${workspace.id}`}>{workspace.name || workspace.id}</h2>
      <p className="muted">
        <code>{workspace.id}</code> · projects: {workspace.projects.join(', ') || '—'} · created {date(workspace.createdAt)}
      </p>
      <button type="button" aria-expanded={open} onClick={() => setOpen(!open)}>
        {open ? 'Hide keys' : 'Show keys'}
      </button>
      {open && <WorkspaceKeys workspace={workspace} />}
    </section>
  );
}

function WorkspaceKeys({ workspace }: { workspace: Workspace }) {
  const keys = useLoad(() => call(api.GET('/admin/v1/workspaces/{workspaceId}/keys', { params: { path: { workspaceId: workspace.id } } })), [workspace.id]);
  const [shown, setShown] = useState<string>();
  const [revoking, setRevoking] = useState<WorkspaceKey>();
  const [error, setError] = useState<unknown>();
  const mint = async () => {
    try {
      const key = await call(api.POST('/admin/v1/workspaces/{workspaceId}/keys', { params: { path: { workspaceId: workspace.id } }, body: {} }));
      setShown(key.key);
      keys.reload();
    } catch (failure) {
      setError(failure);
    }
  };
  return (
    <div>
      <button type="button" onClick={() => void mint()}>
        Create workspace key
      </button>
      <FormAlert error={error} fields={[]} />
      <Loaded load={keys} label="workspace keys">
        {(list) =>
          list.data.length === 0 ? (
            <Empty>No keys.</Empty>
          ) : (
            <ul className="cards">
              {list.data.map((key) => (
                <li key={key.id}>
                  <code>…{key.last4}</code> {key.name} <Status value={key.status} /> {key.scopes.join(', ')} · {date(key.createdAt)}{' '}
                  {key.status === 'active' && (
                    <button type="button" className="danger" onClick={() => setRevoking(key)} aria-label={`Revoke workspace key ending ${key.last4}`}>
                      Revoke
                    </button>
                  )}
                </li>
              ))}
            </ul>
          )
        }
      </Loaded>
      {shown && <SecretDialog title="The new workspace key" secrets={[{ label: 'workspace key', value: shown }]} onClose={() => setShown(undefined)} />}
      {revoking && (
        <ConfirmDialog
          title={`Revoke the workspace key …${revoking.last4}?`}
          expected={revoking.id}
          action="Revoke key"
          onClose={() => setRevoking(undefined)}
          onConfirm={async () => {
            await call(api.POST('/admin/v1/workspace-keys/{keyId}/revoke', { params: { path: { keyId: revoking.id } } }));
            keys.reload();
          }}
        />
      )}
    </div>
  );
}
