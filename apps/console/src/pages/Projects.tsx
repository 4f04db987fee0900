// Projects: list, create, open, archive (typed confirmation: the project's name).
import { useState } from 'react';
import { ApiFailure, api, call } from '../api/client';
import type { Project } from '../api/types';
import { DataTable } from '../components/DataTable';
import { ConfirmAction } from '../components/dialogs';
import { Field, Loaded, MutationStatus, Status, errorFor } from '../components/ui';
import { useLoad } from '../components/useLoad';
import { useMutation } from '../components/useMutation';
import { date } from '../format';
import { href, navigate } from '../router';
import { usePageTitle } from '../components/page';

export function Projects() {
  usePageTitle('Projects');
  const projects = useLoad(() => call(api.GET('/admin/v1/projects', { params: { query: { limit: '100' } } })), []);
  return (
    <>
      <h1>Projects</h1>
      <CreateProject onCreated={(project) => navigate(`/p/${project.id}/apps`)} />
      <OpenProject />
      <section aria-labelledby="projects-list">
        <h2 id="projects-list">All projects</h2>
        <Loaded load={projects} label="projects">
          {(list) => (
            <DataTable
              rows={list.data}
              rowKey={(project) => project.id}
              caption="All projects"
              captionHidden
              empty="No projects yet: create the first one above."
              columns={[
                { header: 'Name', cell: (project) => <a href={href(`/p/${project.id}/overview`)}>{project.name}</a> },
                { header: 'Id', cell: (project) => <code>{project.id}</code> },
                { header: 'Status', cell: (project) => <Status value={project.archived ? 'archived' : 'active'} /> },
                { header: 'Created', cell: (project) => date(project.createdAt) },
                {
                  header: 'Actions',
                  cell: (project) =>
                    !project.archived && (
                      <ConfirmAction
                        label="Archive"
                        name={`Archive ${project.name}`}
                        title={`Archive ${project.name}?`}
                        expected={project.name}
                        action="Archive project"
                        onConfirm={async () => {
                          await call(api.POST('/admin/v1/projects/{projectId}/archive', { params: { path: { projectId: project.id } } }));
                          projects.reload();
                        }}
                      >
                        <p>Every key of this project stops working at once (401 invalid_api_key). This cannot be undone.</p>
                      </ConfirmAction>
                    ),
                },
              ]}
            />
          )}
        </Loaded>
      </section>
    </>
  );
}

function CreateProject({ onCreated }: { onCreated: (project: Project) => void }) {
  const [name, setName] = useState('');
  const create = useMutation(async () => onCreated(await call(api.POST('/admin/v1/projects', { body: { name: name.trim() } }))));
  const submit = () => {
    if (!name.trim()) return create.fail(new ApiFailure(400, 'missing_required_param', 'name is required (1 to 100 characters).', 'name'));
    void create.run();
  };
  return (
    <form
      className="inline-form"
      aria-labelledby="create-project"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
    >
      <h2 id="create-project">New project</h2>
      <Field label="Project name" name="name" value={name} onChange={setName} error={errorFor(create.error, 'name')} />
      <MutationStatus mutation={create} fields={['name']} />
      <button type="submit" className="primary" disabled={create.pending}>
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
