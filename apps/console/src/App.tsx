// The console: the session gate, then the page the hash names.
import { type ReactNode, useCallback, useEffect, useState } from 'react';
import { whenSignedOut } from './api/client';
import { currentSession, signOut } from './api/session';
import { Layout } from './components/Layout';
import { NoticeContext, ProjectNameContext, pageTitle, projectName } from './components/page';
import { Alert } from './components/ui';
import { EnvContext, type Env, rememberEnv, storedEnv } from './env';
import { match, navigate, useHashPath } from './router';
import { AppPage } from './pages/AppPage';
import { Apps } from './pages/Apps';
import { Customer } from './pages/Customer';
import { Customers } from './pages/Customers';
import { ErrorIssue, Errors } from './pages/Errors';
import { Jobs } from './pages/Jobs';
import { Overview } from './pages/Overview';
import { Products } from './pages/Products';
import { Projects } from './pages/Projects';
import { Rails } from './pages/Rails';
import { Reviews } from './pages/Reviews';
import { SignIn } from './pages/SignIn';
import { WebhookEndpointPage, Webhooks } from './pages/Webhooks';
import { Workspaces } from './pages/Workspaces';

type Gate = 'checking' | 'signed-in' | 'signed-out' | 'unavailable';

function page(path: string): { projectId?: string; view: ReactNode } {
  const projectRoutes: [string, (p: Record<string, string>) => ReactNode][] = [
    ['/p/:projectId/overview', (p) => <Overview projectId={p.projectId} />],
    ['/p/:projectId/apps', (p) => <Apps projectId={p.projectId} />],
    ['/p/:projectId/apps/:appId', (p) => <AppPage appId={p.appId} />],
    ['/p/:projectId/customers', (p) => <Customers projectId={p.projectId} />],
    ['/p/:projectId/customers/:customerId', (p) => <Customer projectId={p.projectId} customerId={p.customerId} />],
    ['/p/:projectId/products', (p) => <Products projectId={p.projectId} />],
    ['/p/:projectId/rails', (p) => <Rails projectId={p.projectId} />],
    ['/p/:projectId/reviews', (p) => <Reviews projectId={p.projectId} />],
    ['/p/:projectId/errors', (p) => <Errors projectId={p.projectId} />],
    ['/p/:projectId/errors/:fingerprint', (p) => <ErrorIssue projectId={p.projectId} fingerprint={p.fingerprint} />],
    ['/p/:projectId/webhooks', (p) => <Webhooks projectId={p.projectId} />],
    ['/p/:projectId/webhooks/:endpointId', (p) => <WebhookEndpointPage projectId={p.projectId} endpointId={p.endpointId} />],
  ];
  for (const [pattern, render] of projectRoutes) {
    const params = match(pattern, path);
    if (params) return { projectId: params.projectId, view: render(params) };
  }
  if (match('/jobs', path)) return { view: <Jobs /> };
  if (match('/workspaces', path)) return { view: <Workspaces /> };
  if (path === '/' || path === '') return { view: <Projects /> };
  return { view: <NoPage path={path} /> };
}

function NoPage({ path }: { path: string }) {
  useEffect(() => {
    document.title = pageTitle(['No such page']);
  }, []);
  return (
    <>
      <h1>No such page</h1>
      <Alert>There is no page at {path}.</Alert>
    </>
  );
}

/** The open project's name for page titles: its id until the name is read. */
function useProjectName(projectId: string | undefined): string | undefined {
  const [names, setNames] = useState<Record<string, string>>({});
  useEffect(() => {
    if (!projectId || names[projectId]) return;
    let live = true;
    void projectName(projectId).then((name) => live && setNames((known) => ({ ...known, [projectId]: name })));
    return () => {
      live = false;
    };
  }, [projectId, names]);
  return projectId ? (names[projectId] ?? projectId) : undefined;
}

export function App() {
  const [gate, setGate] = useState<Gate>('checking');
  const [env, setEnvState] = useState<Env>(storedEnv);
  const path = useHashPath();
  const [notice, setNotice] = useState<{ text: string; path: string }>();
  const leaveNotice = useCallback((text: string, target: string) => setNotice({ text, path: target }), []);
  const routed = page(path);
  const project = useProjectName(gate === 'signed-in' ? routed.projectId : undefined);
  const check = useCallback(() => {
    currentSession().then(
      (session) => setGate(session ? 'signed-in' : 'signed-out'),
      () => setGate('unavailable'),
    );
  }, []);
  useEffect(() => {
    whenSignedOut(() => setGate('signed-out'));
    check();
  }, [check]);
  const setEnv = (next: Env) => {
    rememberEnv(next);
    setEnvState(next);
    setNotice(undefined);
  };
  if (gate === 'checking')
    return (
      <main id="main">
        <p role="status">Loading…</p>
      </main>
    );
  if (gate === 'unavailable')
    return (
      <main id="main">
        <Alert>The console cannot reach the service. Reload the page to try again.</Alert>
      </main>
    );
  if (gate === 'signed-out') return <SignIn onSignedIn={check} />;
  const { projectId, view } = routed;
  const onSignOut = () => {
    void signOut().finally(() => {
      navigate('/');
      setGate('signed-out');
    });
  };
  return (
    <EnvContext.Provider value={{ env, setEnv }}>
      <ProjectNameContext.Provider value={project}>
        <NoticeContext.Provider value={leaveNotice}>
          <Layout projectId={projectId} path={path} onSignOut={onSignOut} notice={notice?.path === path ? notice.text : undefined}>
            <div key={`${path}|${env}`}>{view}</div>
          </Layout>
        </NoticeContext.Provider>
      </ProjectNameContext.Provider>
    </EnvContext.Provider>
  );
}
