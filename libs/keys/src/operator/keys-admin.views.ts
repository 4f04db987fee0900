import type { ApiKeyRow } from '../domain/keys.repository.js';
import type { AppRow, ProjectRow } from '../domain/projects.repository.js';
import type { ApiKeyView, AppView, ProjectView } from './operator.dto.js';

export const toSeconds = (date: Date | string) => Math.floor(new Date(date).getTime() / 1000);

export function projectView(project: ProjectRow): ProjectView {
  return { object: 'project', id: project.id, name: project.name, archived: project.archivedAt !== null, createdAt: toSeconds(project.createdAt) };
}

/** A key as the operator sees it at `nowMs` (a rotated-out key past its grace window is `expired`); the secret only when just minted. */
export function keyView(key: ApiKeyRow, nowMs: number, secretPlaintext?: string): ApiKeyView {
  const expired = key.status === 'rotated_out' && key.expiresAt !== null && new Date(key.expiresAt).getTime() <= nowMs;
  const view: ApiKeyView = {
    object: 'api_key',
    id: key.id,
    appId: key.appId,
    kind: key.kind,
    env: key.env,
    last4: key.last4,
    status: expired ? 'expired' : key.status,
    createdAt: toSeconds(key.createdAt),
  };
  if (key.kind === 'publishable') view.key = key.publishableKey!;
  else {
    if (secretPlaintext) view.key = secretPlaintext;
    view.scopes = key.scopes;
  }
  if (key.expiresAt) view.expiresAt = toSeconds(key.expiresAt);
  return view;
}

export function appView(app: AppRow, keys: ApiKeyRow[], nowMs: number, plaintexts = new Map<string, string>()): AppView {
  return {
    object: 'app',
    id: app.id,
    projectId: app.projectId,
    name: app.name,
    platform: app.platform,
    bundleId: app.bundleId,
    packageName: app.packageName,
    allowedOrigins: app.allowedOrigins,
    sdkMinVersion: app.sdkMinVersion,
    sdkDeprecatedVersions: app.sdkDeprecatedVersions,
    verifierConfig: app.verifierConfig,
    errorNoiseDenyList: app.errorNoiseDenyList,
    createdAt: toSeconds(app.createdAt),
    keys: keys.map((k) => keyView(k, nowMs, plaintexts.get(k.id))),
  };
}
