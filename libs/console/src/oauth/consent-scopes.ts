import { AGGREGATE_SCOPES, WORKSPACE_KEY_SCOPES, WORKSPACE_WRITE_SCOPE } from '#keys';

/**
 * The scope names the public CLI asks for by default, in workspace-key scopes: `prism.read`
 * is the aggregate read set; creating projects, apps and keys is `workspace:write`.
 */
const CLIENT_SCOPE_NAMES: ReadonlyMap<string, readonly string[]> = new Map<string, readonly string[]>([
  ['prism.read', AGGREGATE_SCOPES],
  ['projects:write', [WORKSPACE_WRITE_SCOPE]],
  ['apps:write', [WORKSPACE_WRITE_SCOPE]],
  ['keys:write', [WORKSPACE_WRITE_SCOPE]],
]);

/**
 * The workspace-key scopes an authorization request's `scope` parameter asks for, in order,
 * each once: workspace-key scope names as they are, the CLI's names mapped, others left out.
 */
export function requestedScopes(scope: string): string[] {
  const out = new Set<string>();
  for (const name of scope.split(' ')) {
    if (WORKSPACE_KEY_SCOPES.includes(name)) out.add(name);
    else for (const mapped of CLIENT_SCOPE_NAMES.get(name) ?? []) out.add(mapped);
  }
  return [...out];
}
