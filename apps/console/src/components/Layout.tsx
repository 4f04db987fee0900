// The frame of every page: header with the environment switch and sign-out, the sandbox banner,
// and the navigation (the project's pages once a project is open).
import type { ReactNode } from 'react';
import { EnvContext, type Env } from '../env';
import { href } from '../router';
import { useContext } from 'react';

const PROJECT_PAGES: [string, string][] = [
  ['overview', 'Overview'],
  ['apps', 'Apps and keys'],
  ['customers', 'Customers'],
  ['products', 'Products'],
  ['rails', 'Rails'],
  ['reviews', 'Review queues'],
  ['errors', 'Errors'],
  ['webhooks', 'Webhooks'],
];

export function Layout({ projectId, path, onSignOut, children }: { projectId?: string; path: string; onSignOut: () => void; children: ReactNode }) {
  const { env, setEnv } = useContext(EnvContext);
  const current = (target: string) => (path === target || path.startsWith(target + '/') ? 'page' : undefined);
  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      {env === 'sandbox' && (
        <div className="banner" role="note">
          Sandbox: test mode. Nothing here touches production data.
        </div>
      )}
      <header className="top">
        <a className="brand" href={href('/')}>
          Operator console
        </a>
        <fieldset className="env-switch">
          <legend>Environment</legend>
          {(['sandbox', 'production'] as Env[]).map((option) => (
            <label key={option} className={env === option ? 'on' : undefined}>
              <input type="radio" name="env" value={option} checked={env === option} onChange={() => setEnv(option)} />
              {option}
            </label>
          ))}
        </fieldset>
        <button type="button" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      <nav aria-label="Console">
        <ul>
          <li>
            <a href={href('/')} aria-current={path === '/' ? 'page' : undefined}>
              Projects
            </a>
          </li>
          <li>
            <a href={href('/workspaces')} aria-current={current('/workspaces')}>
              Workspaces
            </a>
          </li>
          <li>
            <a href={href('/jobs')} aria-current={current('/jobs')}>
              Jobs
            </a>
          </li>
        </ul>
        {projectId && (
          <ul aria-label="Project">
            {PROJECT_PAGES.map(([page, label]) => (
              <li key={page}>
                <a href={href(`/p/${projectId}/${page}`)} aria-current={current(`/p/${projectId}/${page}`)}>
                  {label}
                </a>
              </li>
            ))}
          </ul>
        )}
      </nav>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}
