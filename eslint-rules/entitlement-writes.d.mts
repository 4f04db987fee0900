import type { ESLint, Rule } from 'eslint';

export declare const onlyThroughWriter: Rule.RuleModule;
declare const plugin: ESLint.Plugin;
export default plugin;
