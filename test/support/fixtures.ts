import { operatorAuth, type TestApp } from './test-app.js';

export const WEB_ORIGIN = 'http://localhost:3000';

export interface AppKeys {
  pubTest: string;
  skTest: string;
  pubLive: string;
  skLive: string;
}

export interface ProjectFixture {
  projectId: string;
  appId: string;
  platform: 'web' | 'ios' | 'android';
  /** Plaintext keys as minted by the operator API. */
  keys: AppKeys;
  /** The same keys' ids (key_…), for rotate and revoke. */
  keyIds: AppKeys;
  /** The headers a client of this app sends besides the key (Origin, bundle id or package name). */
  lockHeaders: Record<string, string>;
}

export interface AppOptions {
  platform?: 'web' | 'ios' | 'android';
  allowedOrigins?: string[];
  bundleId?: string;
  packageName?: string;
  projectId?: string;
}

export async function createProject(t: TestApp, name = 'Test project'): Promise<string> {
  const res = await t.http.post('/admin/v1/projects').set(operatorAuth()).send({ name });
  if (res.status !== 201) throw new Error(`create project failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

/** A project with one app and its four keys, minted through the operator API. */
export async function createProjectWithApp(t: TestApp, options: AppOptions = {}): Promise<ProjectFixture> {
  const platform = options.platform ?? 'web';
  const projectId = options.projectId ?? (await createProject(t));
  const body: Record<string, unknown> = { name: `${platform} app`, platform };
  if (platform === 'web') body.allowedOrigins = options.allowedOrigins ?? [WEB_ORIGIN];
  if (platform === 'ios') body.bundleId = options.bundleId ?? 'com.example.app';
  if (platform === 'android') body.packageName = options.packageName ?? 'com.example.app';
  const res = await t.http.post(`/admin/v1/projects/${projectId}/apps`).set(operatorAuth()).send(body);
  if (res.status !== 201) throw new Error(`create app failed: ${res.status} ${JSON.stringify(res.body)}`);
  const find = (kind: string, env: string) => res.body.keys.find((k: { kind: string; env: string }) => k.kind === kind && k.env === env);
  const pick = (field: 'key' | 'id'): AppKeys => ({
    pubTest: find('publishable', 'sandbox')[field],
    skTest: find('secret', 'sandbox')[field],
    pubLive: find('publishable', 'production')[field],
    skLive: find('secret', 'production')[field],
  });
  const lockHeaders: Record<string, string> =
    platform === 'web'
      ? { Origin: (body.allowedOrigins as string[])[0] ?? WEB_ORIGIN }
      : platform === 'ios'
        ? { 'X-Service-Bundle-Id': body.bundleId as string }
        : { 'X-Service-Package-Name': body.packageName as string };
  return { projectId, appId: res.body.id, platform, keys: pick('key'), keyIds: pick('id'), lockHeaders };
}

/** Headers for a call with `key`: the bearer key plus the app's lock headers (ignored for secret keys). */
export function keyHeaders(fixture: ProjectFixture, key: string): Record<string, string> {
  return { Authorization: `Bearer ${key}`, ...fixture.lockHeaders };
}

/** Makes a project's buckets small (operator rate-limit override). */
export async function setRateLimits(t: TestApp, projectId: string, table: Record<string, { sustained: number; burst: number }>): Promise<void> {
  const res = await t.http.put(`/admin/v1/projects/${projectId}/rate-limits`).set(operatorAuth()).send(table);
  if (res.status !== 200) throw new Error(`rate-limit override failed: ${res.status} ${JSON.stringify(res.body)}`);
}
