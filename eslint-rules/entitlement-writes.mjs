// ESLint rule of the one entitlement write path: outside libs/entitlements nothing changes an
// entitlement but `EntitlementWriter.apply(scope, change)`.
// - `only-through-writer`: another context (and apps/) imports none of the helpers `apply`
//   replaced (the change feed and its tracker, the migration grants, the row writes), calls none
//   of their methods, and writes no SQL naming the entitlements context's tables (`entitlements`,
//   `entitlement_keys`, `catalog_products`): it reads them through the context's services.
import path from 'node:path';

/** Names of the entitlements context that only its writer uses. */
const WRITER_INTERNALS = new Set([
  'EntitlementChangeFeed',
  'EntitlementChangeTracker',
  'ChangeFacts',
  'WrittenEntitlement',
  'ActiveState',
  'MigrationGrants',
  'RailEntitlementWrite',
  'EntitlementRepository',
]);
/** Methods of the old write helpers: the writer's own steps now. */
const WRITER_STEPS = new Set(['trackLocking', 'moveRailEntitlements', 'writeMany', 'grantLifetime']);
/** SQL naming a table of the entitlements context (keywords in capitals, as every statement here writes them; prose does not match). */
const ENTITLEMENT_SQL = /\b(FROM|JOIN|INTO|UPDATE|TABLE|REFERENCES|TRUNCATE)\s+(public\.)?"?(entitlements|entitlement_keys|catalog_products)\b/;

/** @type {import('eslint').Rule.RuleModule} */
export const onlyThroughWriter = {
  meta: {
    type: 'problem',
    docs: { description: 'Outside the entitlements context an entitlement changes only through EntitlementWriter.apply.' },
    schema: [{ type: 'object', properties: { root: { type: 'string' } }, additionalProperties: false }],
    messages: {
      internal: "'{{name}}' is the entitlements writer's own: change an entitlement with EntitlementWriter.apply(scope, change).",
      step: "'{{name}}' is a step of the entitlements writer: change an entitlement with EntitlementWriter.apply(scope, change).",
      sql: 'SQL on a table of the entitlements context: read it through its services, change it with EntitlementWriter.apply(scope, change).',
    },
  },
  create(context) {
    const root = context.options[0]?.root ?? context.cwd;
    const relative = path.relative(root, context.filename).split(path.sep).join('/');
    if (relative.startsWith('libs/entitlements/')) return {};
    const checkText = (node, text) => {
      if (ENTITLEMENT_SQL.test(text)) context.report({ node, messageId: 'sql' });
    };
    return {
      ImportSpecifier(node) {
        const name = node.imported.name ?? node.imported.value;
        if (WRITER_INTERNALS.has(name)) context.report({ node, messageId: 'internal', data: { name } });
      },
      MemberExpression(node) {
        if (node.property.type === 'Identifier' && !node.computed && WRITER_STEPS.has(node.property.name)) {
          context.report({ node: node.property, messageId: 'step', data: { name: node.property.name } });
        }
      },
      Literal(node) {
        if (typeof node.value === 'string') checkText(node, node.value);
      },
      TemplateLiteral(node) {
        checkText(node, node.quasis.map((quasi) => quasi.value.cooked ?? quasi.value.raw).join(' '));
      },
    };
  },
};

export default { rules: { 'only-through-writer': onlyThroughWriter } };
