// What every page shares beyond its data: its document title ("Customers · <project> · Console"),
// a notice left for the page a person is sent to, and following an environment switch when the
// object a page shows does not exist in the other environment.
import { createContext, useContext, useEffect } from 'react';
import { ApiFailure, api, call } from '../api/client';
import { useEnv } from '../env';
import { navigate } from '../router';
import type { Load } from './useLoad';

export const ProjectNameContext = createContext<string | undefined>(undefined);

export const NoticeContext = createContext<(text: string, path: string) => void>(() => {});

/** Sets the document title: the page, then the open project's name, then the console. */
export function usePageTitle(title: string | undefined): void {
  const project = useContext(ProjectNameContext);
  useEffect(() => {
    document.title = [title, project, 'Console'].filter(Boolean).join(' · ');
  }, [title, project]);
}

export function pageTitle(parts: (string | undefined)[]): string {
  return [...parts, 'Console'].filter(Boolean).join(' · ');
}

const projectNames = new Map<string, Promise<string>>();

/** A project's name, read once per project while the console is open (titles name it). */
export function projectName(projectId: string): Promise<string> {
  let name = projectNames.get(projectId);
  if (!name) {
    name = call(api.GET('/admin/v1/projects/{projectId}', { params: { path: { projectId } } })).then(
      (project) => project.name,
      () => {
        projectNames.delete(projectId);
        return projectId;
      },
    );
    projectNames.set(projectId, name);
  }
  return name;
}

/** The object is not in this environment (the API answers 404 for it). */
export function isMissing(load: Load<unknown>): boolean {
  return load.state === 'error' && load.error instanceof ApiFailure && load.error.status === 404;
}

/**
 * After an environment switch the object a page shows may not exist in the new environment:
 * the page then opens its list (replacing the history entry) with a notice, instead of errors.
 */
export function useFollowEnv(missing: boolean, what: string, listPath: string): void {
  const env = useEnv();
  const notice = useContext(NoticeContext);
  useEffect(() => {
    if (!missing) return;
    notice(`${what} is not in ${env}: here is the list in ${env}.`, listPath);
    navigate(listPath, { replace: true });
  }, [missing, what, listPath, env, notice]);
}
