// The frame of every page: header with the environment switch and sign-out, the sandbox banner
// (a labelled region: all content sits in landmarks), the navigation (the project's pages once a
// project is open) and a notice left by the page that sent the person here.
import { type ReactNode, useContext } from 'react';
import { EnvContext, type Env } from '../env';
import { href } from '../router';
import { Alert } from './ui';

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

interface Props {
  projectId?: string;
  path: string;
  onSignOut: () => void;
  notice?: string;
  children: ReactNode;
}

export function Layout({ projectId, path, onSignOut, notice, children }: Props) {
  const { env, setEnv } = useContext(EnvContext);
  const current = (target: string) => (path === target || path.startsWith(target + '/') ? 'page' : undefined);
  return (
    <>
      <a
        className="skip"
        href="#main"
        onClick={(event) => {
          // The hash is the router's: move focus without changing it.
          event.preventDefault();
          document.getElementById('main')?.focus();
        }}
      >
        Skip to content
      </a>
      {env === 'sandbox' && (
        <section className="banner" aria-label="Test mode">
          Sandbox: test mode. Nothing here touches production data.
        </section>
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
        {notice && <Alert kind="info">{notice}</Alert>}
        {children}
      </main>
    </>
  );
}
