import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import ts from 'typescript';
import { type TenantScope, TenantScopes, crossTenant } from '#platform';
import { RailSubscriptionsRepository } from '../../libs/rails/src/model/rail-subscriptions.repository.js';
import { testScope } from '../support/scopes.js';

/**
 * Tenant scope by construction, proven at the type level twice:
 * - the compiler API compiles a fixture that must not compile (type-fixtures/*.mts, outside
 *   `npm run typecheck`) with the project's compiler options and expects exactly the marked
 *   diagnostics;
 * - `@ts-expect-error` lines below, which `npm run typecheck` checks (an expected error that
 *   stops happening fails the typecheck).
 */
const ROOT = resolve(__dirname, '../..');
const FIXTURE = join(__dirname, 'type-fixtures', 'unscoped-tenant-access.fixture.mts');

function projectCompilerOptions(): ts.CompilerOptions {
  const configPath = join(ROOT, 'tsconfig.json');
  const read = ts.readConfigFile(configPath, (p) => ts.sys.readFile(p));
  if (read.error) throw new Error(ts.flattenDiagnosticMessageText(read.error.messageText, '\n'));
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, dirname(configPath));
  return { ...parsed.options, noEmit: true };
}

/** `line:TScode` of every diagnostic, and the flattened message chain of each. */
function compile(file: string): { found: string[]; messages: string[] } {
  const program = ts.createProgram({ rootNames: [file], options: projectCompilerOptions() });
  const diagnostics = [...program.getSyntacticDiagnostics(), ...program.getSemanticDiagnostics(program.getSourceFile(file)), ...program.getGlobalDiagnostics()];
  const found: string[] = [];
  const messages: string[] = [];
  for (const d of diagnostics) {
    const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0;
    found.push(`${line}:TS${d.code}`);
    messages.push(`${line}: ${ts.flattenDiagnosticMessageText(d.messageText, ' / ')}`);
  }
  return { found: found.sort(), messages };
}

function expectedMarkers(file: string): string[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .flatMap((text, i) => [...text.matchAll(/\/\/ error: (TS\d+)/g)].map((m) => `${i + 1}:${m[1]}`))
    .sort();
}

describe('tenant scope by construction (type level)', () => {
  it('a repository call with a plain { projectId, env } literal, or without any scope, does not compile', () => {
    const expected = expectedMarkers(FIXTURE);
    expect(expected).toHaveLength(4);
    const { found, messages } = compile(FIXTURE);
    expect({ found, messages }).toEqual({ found: expected, messages: expect.any(Array) });
    // The refusals name the missing brand, not some unrelated mismatch.
    expect(messages.filter((m) => /'TenantScope'/.test(m))).toHaveLength(4);
    // The three literals lack exactly the brand; the bare customer id is no scope at all.
    expect(messages.filter((m) => /Property '\[TENANT_SCOPE\]' is missing in type .* but required in type 'TenantScope'/.test(m))).toHaveLength(3);
    expect(messages.filter((m) => /Argument of type 'string' is not assignable to parameter of type 'TenantScope'/.test(m))).toHaveLength(1);
  }, 20000);

  it('the typed checks below run under npm run typecheck (and the scopes they accept work at run time)', () => {
    expect(typeChecks).toBeInstanceOf(Function);
    expect(testScope('proj_1')).toEqual({ projectId: 'proj_1', env: 'sandbox' });
    expect(crossTenant('a documented scan').scopeOf({ projectId: 'proj_1', env: 'production' })).toEqual({ projectId: 'proj_1', env: 'production' });
  });
});

/** Never called: only compiled, by `npm run typecheck`. */
function typeChecks(repository: RailSubscriptionsRepository, customerId: string): void {
  // @ts-expect-error a plain literal is not a TenantScope (the brand is missing)
  void repository.listForCustomer({ projectId: 'proj_1', env: 'sandbox' }, customerId);
  // @ts-expect-error a repository call without a scope
  void repository.listForCustomer(customerId);
  // @ts-expect-error a scope is not assembled from request values
  const forged: TenantScope = { projectId: 'proj_1', env: 'production' };
  // @ts-expect-error a scope's fields cannot be reassigned
  testScope('proj_1').projectId = 'proj_2';
  void forged;
  // The named constructors compile.
  void repository.listForCustomer(TenantScopes.operator('proj_1', 'sandbox'), customerId);
  void repository.listForCustomer(TenantScopes.ofVerifiedKey('proj_1', 'production'), customerId);
  void repository.listForCustomer(crossTenant('a documented scan').scopeOf({ projectId: 'proj_1', env: 'sandbox' }), customerId);
}
