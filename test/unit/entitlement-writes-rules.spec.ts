import type { Linter } from 'eslint';
import entitlementWrites from '../../eslint-rules/entitlement-writes.mjs';
import { REPO_ROOT, lintWith } from '../support/lint-rule.js';

/** The lint rule of the one entitlement write path (eslint.config.mjs, `entitlement-writes/only-through-writer`). */
function lint(code: string, file = 'libs/rails/src/model/sample.service.ts'): string[] {
  const rules: Linter.RulesRecord = { 'entitlement-writes/only-through-writer': ['error', { root: REPO_ROOT }] };
  return lintWith({ 'entitlement-writes': entitlementWrites }, rules, code, file).map((m) => `${m.line}: ${m.message.split(':')[0]}`);
}

describe('lint: one entitlement write path', () => {
  it('accepts the writer, its command and the read services', () => {
    const code = [
      "import { EntitlementWriter, EntitlementReadService, type EntitlementChange } from '#entitlements';",
      "const change: EntitlementChange = { kind: 'fold', fromCustomerId: 'a', intoCustomerId: 'b' };",
      'await writer.apply(scope, change);',
      "await sql.rows('SELECT id FROM rail_subscriptions WHERE customer_id = $1', [id]);",
      "const text = 'Update entitlements of a customer through the writer';",
    ].join('\n');
    expect(lint(code)).toEqual([]);
  });

  it('refuses the helpers apply replaced, by import and by call', () => {
    const code = [
      "import { EntitlementChangeFeed, MigrationGrants, type RailEntitlementWrite } from '#entitlements';",
      "const { tracker } = await feed.trackLocking(scope, id, 'pro', 'manual');",
      'await writer.writeMany(scope, rows);',
      'await writer.moveRailEntitlements(scope, a, b);',
      'await grants.grantLifetime(scope, pairs, context);',
    ].join('\n');
    expect(lint(code)).toEqual([
      "1: 'EntitlementChangeFeed' is the entitlements writer's own",
      "1: 'MigrationGrants' is the entitlements writer's own",
      "1: 'RailEntitlementWrite' is the entitlements writer's own",
      "2: 'trackLocking' is a step of the entitlements writer",
      "3: 'writeMany' is a step of the entitlements writer",
      "4: 'moveRailEntitlements' is a step of the entitlements writer",
      "5: 'grantLifetime' is a step of the entitlements writer",
    ]);
  });

  it('refuses SQL on the entitlements tables outside the entitlements context', () => {
    const code = [
      "await sql.rows('UPDATE entitlements SET state = $1 WHERE customer_id = $2', ['revoked', id]);",
      'await sql.rows(`SELECT key FROM entitlement_keys WHERE project_id = ${p}`);',
      'await sql.rows(`SELECT e.key FROM customers c\n JOIN entitlements e ON e.customer_id = c.id`);',
      "await sql.rows('INSERT INTO catalog_products (project_id) VALUES ($1)', [p]);",
    ].join('\n');
    expect(lint(code)).toEqual([
      '1: SQL on a table of the entitlements context',
      '2: SQL on a table of the entitlements context',
      '3: SQL on a table of the entitlements context',
      '5: SQL on a table of the entitlements context',
    ]);
  });

  it('lets the entitlements context use its own tables and helpers', () => {
    const code = [
      "import { EntitlementRepository } from '../domain/entitlement.repository.js';",
      "await sql.rows('UPDATE entitlements SET state = $1 WHERE customer_id = $2', ['revoked', id]);",
      "const { tracker } = await this.feed.trackLocking(scope, id, 'pro', 'manual');",
    ].join('\n');
    expect(lint(code, 'libs/entitlements/src/grants/entitlement-writer.service.ts')).toEqual([]);
  });
});
