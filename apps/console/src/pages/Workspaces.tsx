// Workspaces (what the CLI and the assistant connector sign in to) and their keys: create (shown
// once), revoke with a typed confirmation; attach a project.
import { useState } from 'react';
import { ApiFailure, api, call } from '../api/client';
import type { Workspace } from '../api/types';
import { ConfirmAction, SecretDialog } from '../components/dialogs';
import { Empty, Field, Loaded, MutationStatus, Status, errorFor } from '../components/ui';
import { useLoad } from '../components/useLoad';
import { useMutation } from '../components/useMutation';
import { date } from '../format';
import { usePageTitle } from '../components/page';

export function Workspaces() {
  usePageTitle('Workspaces');
  const workspaces = useLoad(() => call(api.GET('/admin/v1/workspaces')), []);
  const [name, setName] = useState('');
  const create = useMutation(
    async () => {
      await call(api.POST('/admin/v1/workspaces', { body: { name: name.trim() } }));
      setName('');
    },
    { reload: workspaces.reload },
  );
  const submit = () => {
    if (!name.trim()) return create.fail(new ApiFailure(400, 'missing_required_param', 'name is required (1 to 100 characters).', 'name'));
    void create.run();
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
          submit();
        }}
      >
        <h2 id="create-workspace">New workspace</h2>
        <Field label="Workspace name" name="name" value={name} onChange={setName} error={errorFor(create.error, 'name')} />
        <MutationStatus mutation={create} fields={['name']} />
        <button type="submit" className="primary" disabled={create.pending}>
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
  const mint = useMutation(
    async () => {
      const key = await call(api.POST('/admin/v1/workspaces/{workspaceId}/keys', { params: { path: { workspaceId: workspace.id } }, body: {} }));
      setShown(key.key);
    },
    { reload: keys.reload },
  );
  return (
    <div>
      <button type="button" onClick={() => void mint.run()} disabled={mint.pending}>
        Create workspace key
      </button>
      <MutationStatus mutation={mint} />
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
                    <ConfirmAction
                      label="Revoke"
                      name={`Revoke workspace key ending ${key.last4}`}
                      title={`Revoke the workspace key …${key.last4}?`}
                      expected={key.id}
                      action="Revoke key"
                      onConfirm={async () => {
                        await call(api.POST('/admin/v1/workspace-keys/{keyId}/revoke', { params: { path: { keyId: key.id } } }));
                        keys.reload();
                      }}
                    />
                  )}
                </li>
              ))}
            </ul>
          )
        }
      </Loaded>
      {shown && <SecretDialog title="The new workspace key" secrets={[{ label: 'workspace key', value: shown }]} onClose={() => setShown(undefined)} />}
    </div>
  );
}
