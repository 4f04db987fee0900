import { fieldOfError, match, nextAfterSignIn } from '../../apps/console/src/rules.js';
import { requestedScopes } from '../../libs/console/src/oauth/consent-scopes.js';

describe('operator console rules', () => {
  it('follows ?next= only into the OAuth authorize page', () => {
    expect(nextAfterSignIn('?next=%2Foauth%2Fauthorize%3Fclient_id%3Dc1%26state%3Ds')).toBe('/oauth/authorize?client_id=c1&state=s');
    expect(nextAfterSignIn('?next=/oauth/authorize')).toBe('/oauth/authorize');
    expect(nextAfterSignIn('?next=https://evil.example/oauth/authorize')).toBeNull();
    expect(nextAfterSignIn('?next=//evil.example/oauth/authorize')).toBeNull();
    expect(nextAfterSignIn('?next=/admin/v1/projects')).toBeNull();
    expect(nextAfterSignIn('')).toBeNull();
  });

  it('matches hash routes and decodes their parameters', () => {
    expect(match('/p/:projectId/customers/:customerId', '/p/proj_1/customers/cdcust_a%2Fb')).toEqual({ projectId: 'proj_1', customerId: 'cdcust_a/b' });
    expect(match('/p/:projectId/apps', '/p/proj_1/apps?x=1')).toEqual({ projectId: 'proj_1' });
    expect(match('/p/:projectId/apps', '/p/proj_1/apps/app_1')).toBeNull();
    expect(match('/p/:projectId/apps', '/p//apps')).toBeNull();
    expect(match('/jobs', '/jobs')).toEqual({});
  });

  it("puts an API error next to the field it names: param first, else the message's first word", () => {
    const fields = ['entitlementKey', 'reason'];
    expect(fieldOfError('reason must be longer than or equal to 20 characters', undefined, fields)).toBe('reason');
    expect(fieldOfError('url: hooks.example.com does not resolve', undefined, ['url'])).toBe('url');
    expect(fieldOfError('Something else went wrong', undefined, fields)).toBeUndefined();
    expect(fieldOfError('must be snake_case', 'entitlementKey', fields)).toBe('entitlementKey');
    expect(fieldOfError('reason is wrong', 'env', fields)).toBeUndefined();
  });
});

describe('connector sign-in scopes', () => {
  it("maps the CLI's default scope names: prism.read the aggregate read set, the *:write ones workspace:write", () => {
    expect(requestedScopes('prism.read projects:write apps:write keys:write')).toEqual([
      'reporting:aggregate',
      'revenue:read',
      'errors:read',
      'buckets:read',
      'workspace:write',
    ]);
    expect(requestedScopes('prism.read')).toEqual(['reporting:aggregate', 'revenue:read', 'errors:read', 'buckets:read']);
  });

  it('keeps workspace-key scope names, each once, and leaves unknown names out', () => {
    expect(requestedScopes('revenue:read prism.read reporting:identity constructor __proto__ nope')).toEqual([
      'revenue:read',
      'reporting:aggregate',
      'errors:read',
      'buckets:read',
      'reporting:identity',
    ]);
    expect(requestedScopes('')).toEqual([]);
  });
});
