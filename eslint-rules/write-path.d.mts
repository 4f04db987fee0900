import type { ESLint, Rule } from 'eslint';

export declare const scopeFirst: Rule.RuleModule;
export declare const projectIdFirst: Rule.RuleModule;
export declare const noEntityManager: Rule.RuleModule;
export declare const noExportedRepository: Rule.RuleModule;
declare const plugin: ESLint.Plugin;
export default plugin;
