// Projects: list, create, open, archive (typed confirmation: the project's name).
import { useState } from 'react';
import { ApiFailure, api, call } from '../api/client';
import type { Project } from '../api/types';
import { ConfirmDialog } from '../components/dialogs';
import { Empty, Field, FormAlert, Loaded, Status, errorFor } from '../components/ui';
import { useLoad } from '../components/useLoad';
import { date } from '../format';
import { href, navigate } from '../router';

export function Projects() {
  const projects = useLoad(() => call(api.GET('/admin/v1/projects', { params: { query: { limit: '100' } } })), []);
  const [archiving, setArchiving] = useState<Project>();
  return (
    <>
      <h1>Projects</h1>
      <CreateProject onCreated={(project) => navigate(`/p/${project.id}/apps`)} />
      <OpenProject />
      <section aria-labelledby="projects-list">
        <h2 id="projects-list">All projects</h2>
        <Loaded load={projects} label="projects">
          {(list) =>
            list.data.length === 0 ? (
              <Empty>No projects yet: create the first one above.</Empty>
            ) : (
              <table tabIndex={0}>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Id</th>
                    <th scope="col">Status</th>
                    <th scope="col">Created</th>
                    <th scope="col">Actions</th>
                  </tr>
                </thead>
                <tbody>
                  {list.data.map((project) => (
                    <tr key={project.id}>
                      <td>
                        <a href={href(`/p/${project.id}/overview`)}>{project.name}</a>
                      </td>
                      <td>
                        <code>{project.id}</code>
                      </td>
                      <td>
                        <Status value={project.archived ? 'archived' : 'active'} />
                      </td>
                      <td>{date(project.createdAt)}</td>
                      <td>
                        {!project.archived && (
                          <button type="button" className="danger" onClick={() => setArchiving(project)}>
                            Archive
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
      {archiving && (
        <ConfirmDialog
          title={`Archive ${archiving.name}?`}
          expected={archiving.name}
          action="Archive project"
          onClose={() => setArchiving(undefined)}
          onConfirm={async () => {
            await call(api.POST('/admin/v1/projects/{projectId}/archive', { params: { path: { projectId: archiving.id } } }));
            projects.reload();
          }}
        >
          <p>Every key of this project stops working at once (401 invalid_api_key). This cannot be undone.</p>
        </ConfirmDialog>
      )}
    </>
  );
}

function CreateProject({ onCreated }: { onCreated: (project: Project) => void }) {
  const [name, setName] = useState('');
  const [error, setError] = useState<unknown>();
  const submit = async () => {
    if (!name.trim()) return setError(new ApiFailure(400, 'missing_required_param', 'name is required (1 to 100 characters).', 'name'));
    try {
      onCreated(await call(api.POST('/admin/v1/projects', { body: { name: name.trim() } })));
    } catch (failure) {
      setError(failure);
    }
  };
  return (
    <form
      className="inline-form"
      aria-labelledby="create-project"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        void submit();
      }}
    >
      <h2 id="create-project">New project</h2>
      <Field label="Project name" name="name" value={name} onChange={setName} error={errorFor(error, 'name')} />
      <FormAlert error={error} fields={['name']} />
      <button type="submit" className="primary">
        Create project
      </button>
    </form>
  );
}

function OpenProject() {
  const [id, setId] = useState('');
  return (
    <form
      className="inline-form"
      aria-labelledby="open-project"
      onSubmit={(event) => {
        event.preventDefault();
        if (id.trim()) navigate(`/p/${id.trim()}/overview`);
      }}
    >
      <h2 id="open-project">Open a project by id</h2>
      <Field label="Project id" name="projectId" placeholder="proj_…" value={id} onChange={setId} />
      <button type="submit">Open</button>
    </form>
  );
}
