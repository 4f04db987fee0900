import writePath from '../../eslint-rules/write-path.mjs';
import { lintWith } from '../support/lint-rule.js';

/** The lint rules of the one write path (eslint.config.mjs, `write-path/*`). */
function lint(code: string, file = 'libs/rails/src/model/sample.service.ts'): string[] {
  const rules = {
    'write-path/scope-first': 'error',
    'write-path/project-id-first': 'error',
    'write-path/no-entity-manager': 'error',
    'write-path/no-exported-repository': 'error',
  } as const;
  return lintWith({ 'write-path': writePath }, rules, code, file).map((m) => `${m.line}: ${m.ruleId}`);
}

describe('lint: one write path', () => {
  it('accepts the scope first in methods, functions, function types and interfaces', () => {
    const code = [
      'class A { find(scope: TenantScope, id: string) {} constructor(private readonly sql: Sql) {} }',
      'function b(auth: AuthContext, x: number) {}',
      'type Hook = (scope: TenantScope, subject: Subject) => Promise<void>;',
      'interface Sink { record(scope: TenantScope, changes: Change[]): Promise<void> }',
      'const c = (rate: Rate, scope: TenantScope | undefined) => rate;',
    ].join('\n');
    expect(lint(code)).toEqual([]);
  });

  it('refuses a tenant scope or caller after another parameter', () => {
    const code = [
      'class A { find(id: string, scope: TenantScope) {} }',
      'function b(x: number, auth: AuthContext) {}',
      'type Hook = (subject: Subject, scope: TenantScope) => Promise<void>;',
      'interface Sink { record(changes: Change[], scope: TenantScope): Promise<void> }',
      'const d = (x: number, scope: TenantScope = s) => x;',
    ].join('\n');
    expect(lint(code)).toEqual([
      '1: write-path/scope-first',
      '2: write-path/scope-first',
      '3: write-path/scope-first',
      '4: write-path/scope-first',
      '5: write-path/scope-first',
    ]);
  });

  it('accepts a bare projectId first, or after the tenant scope or a cross-tenant token', () => {
    const code = [
      'export class ARepository {',
      '  find(projectId: string, id: string) {}',
      '  list(scope: TenantScope, projectId: string) {}',
      '  purge(_scan: CrossTenant, cutoff: Date, projectId: string | null) {}',
      '  create(auth: AuthContext, projectId: string) {}',
      '  private helper(id: string, projectId: string) {}',
      '  constructor(private readonly sql: Sql, projectId: string) {}',
      '}',
      'class Internal { helper(id: string, projectId: string) {} }',
      'export function plain(id: string, projectId: string) {}',
    ].join('\n');
    expect(lint(code, 'libs/rails/src/model/sample.repository.ts')).toEqual([]);
  });

  it('refuses a bare projectId after another parameter in an exported class', () => {
    const code = [
      'export class AService {',
      '  addProject(workspaceId: string, projectId: string) {}',
      '  refused(rail: PurchaseRail, projectId?: string) {}',
      '  withDefault(id: string, projectId = "p") {}',
      '}',
    ].join('\n');
    expect(lint(code, 'libs/rails/src/model/sample.service.ts')).toEqual([
      '2: write-path/project-id-first',
      '3: write-path/project-id-first',
      '4: write-path/project-id-first',
    ]);
  });

  it('refuses an EntityManager anywhere it is named', () => {
    const code = ["import type { EntityManager } from 'typeorm';", 'class A { find(scope: TenantScope, manager: EntityManager) {} }'].join('\n');
    expect(lint(code)).toEqual(['1: write-path/no-entity-manager', '2: write-path/no-entity-manager']);
  });

  it("refuses a repository in a module's exports or a context's index, and accepts services", () => {
    const module = ['@Module({ providers: [ARepository, AService], exports: [AService, ARepository] })', 'export class AModule {}'].join('\n');
    expect(lint(module, 'libs/rails/src/rails.module.ts')).toEqual(['1: write-path/no-exported-repository']);
    const index = ["export { AService } from './a.service.js';", "export { ARepository } from './a.repository.js';"].join('\n');
    expect(lint(index, 'libs/rails/src/index.ts')).toEqual(['2: write-path/no-exported-repository']);
    expect(lint(index, 'libs/rails/src/model/barrel.ts')).toEqual([]);
  });
});
