// ESLint rules of the one write path (docs/decisions/sql-only-in-repositories-one-write-path-through-sql.md):
// - `scope-first`: a function, method or function type that takes the tenant scope (a parameter
//   typed `TenantScope` or `AuthContext`) takes it first, so every tenant-data call reads alike.
// - `no-entity-manager`: no code outside the platform's database layer and migrations names
//   TypeORM's `EntityManager`; statements join the ambient transaction of `Sql.transaction`.
// - `no-exported-repository`: a Nest module's `exports` and a context's `index.ts` name no
//   `*Repository`: another module reaches a context's tables through its services.
// - `project-id-first`: a method of an exported class (eslint.config.mjs applies it to
//   repositories and services) that takes a bare `projectId` takes it first, unless a tenant
//   scope or a cross-tenant token (`TenantScope`, `AuthContext`, `CrossTenant`) comes first.
const SCOPE_TYPES = new Set(['TenantScope', 'AuthContext']);

const typeName = (param) => {
  const node = param.type === 'TSParameterProperty' ? param.parameter : param.type === 'AssignmentPattern' ? param.left : param;
  const annotation = node?.typeAnnotation?.typeAnnotation;
  if (annotation?.type !== 'TSTypeReference' || annotation.typeName.type !== 'Identifier') return null;
  return annotation.typeName.name;
};

/** @type {import('eslint').Rule.RuleModule} */
export const scopeFirst = {
  meta: {
    type: 'problem',
    docs: { description: 'A function that takes the tenant scope takes it first.' },
    schema: [],
    messages: { notFirst: "'{{type}}' is parameter {{index}}: the tenant scope comes first." },
  },
  create(context) {
    function check(node) {
      const params = node.params ?? node.parameters ?? [];
      params.forEach((param, index) => {
        const type = typeName(param);
        if (index > 0 && type && SCOPE_TYPES.has(type)) {
          context.report({ node: param, messageId: 'notFirst', data: { type, index: String(index + 1) } });
        }
      });
    }
    return {
      FunctionDeclaration: check,
      FunctionExpression: check,
      ArrowFunctionExpression: check,
      TSFunctionType: check,
      TSMethodSignature: check,
      TSDeclareFunction: check,
      TSEmptyBodyFunctionExpression: check,
    };
  },
};

const paramName = (param) => {
  const node = param.type === 'TSParameterProperty' ? param.parameter : param.type === 'AssignmentPattern' ? param.left : param;
  return node?.type === 'Identifier' ? node.name : null;
};

const TENANT_FIRST = new Set([...SCOPE_TYPES, 'CrossTenant']);

/** @type {import('eslint').Rule.RuleModule} */
export const projectIdFirst = {
  meta: {
    type: 'problem',
    docs: { description: 'A repository or service method that takes a bare projectId takes it first (or after the tenant scope).' },
    schema: [],
    messages: { notFirst: "'projectId' is parameter {{index}} of '{{method}}': the tenant comes first (a TenantScope, or the projectId)." },
  },
  create(context) {
    const exported = (classNode) => {
      const parent = classNode.parent;
      return parent?.type === 'ExportNamedDeclaration' || parent?.type === 'ExportDefaultDeclaration';
    };
    return {
      MethodDefinition(node) {
        if (node.kind === 'constructor' || node.accessibility === 'private' || node.accessibility === 'protected') return;
        if (node.key.type === 'PrivateIdentifier') return;
        const classNode = node.parent?.parent;
        if (!classNode || !exported(classNode)) return;
        const params = node.value.params;
        const index = params.findIndex((param) => paramName(param) === 'projectId');
        if (index <= 0 || TENANT_FIRST.has(typeName(params[0]))) return;
        const method = node.key.type === 'Identifier' ? node.key.name : String(node.key.value);
        context.report({ node: params[index], messageId: 'notFirst', data: { method, index: String(index + 1) } });
      },
    };
  },
};

/** @type {import('eslint').Rule.RuleModule} */
export const noEntityManager = {
  meta: {
    type: 'problem',
    docs: { description: "No EntityManager outside the platform's database layer: statements join the ambient transaction." },
    schema: [],
    messages: { named: "'EntityManager' here: run statements through Sql (they join the ambient transaction of Sql.transaction)." },
  },
  create(context) {
    return {
      Identifier(node) {
        if (node.name !== 'EntityManager') return;
        // An import specifier holds the name twice (imported and local): report it once.
        if (node.parent?.type === 'ImportSpecifier' && node !== node.parent.local) return;
        context.report({ node, messageId: 'named' });
      },
    };
  },
};

const REPOSITORY = /Repository$/;

/** @type {import('eslint').Rule.RuleModule} */
export const noExportedRepository = {
  meta: {
    type: 'problem',
    docs: { description: 'A module or a context index exports services, never a repository.' },
    schema: [],
    messages: { exported: "'{{name}}' is a repository: export a service that uses it instead." },
  },
  create(context) {
    const isIndex = /[\\/]libs[\\/][^\\/]+[\\/]src[\\/]index\.ts$/.test(context.filename);
    const report = (node, name) => REPOSITORY.test(name) && context.report({ node, messageId: 'exported', data: { name } });
    return {
      "Decorator[expression.callee.name='Module'] Property[key.name='exports'] > ArrayExpression > Identifier"(node) {
        report(node, node.name);
      },
      ExportSpecifier(node) {
        if (isIndex) report(node, node.exported.name ?? node.exported.value);
      },
    };
  },
};

export default {
  rules: {
    'scope-first': scopeFirst,
    'project-id-first': projectIdFirst,
    'no-entity-manager': noEntityManager,
    'no-exported-repository': noExportedRepository,
  },
};
