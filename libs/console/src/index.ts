export { ConsoleModule } from './console.module.js';
export { CONSOLE_CSP, CONSOLE_HEADERS } from './console-headers.js';
import { ConsoleOauth1790000003010 } from './migrations/1790000003010-console-oauth.migration.js';
import { ConsoleOauthCodeFamily1790000003610 } from './migrations/1790000003610-console-oauth-code-family.migration.js';

/** Migrations of the console (connector sign-in), after the keys context's (they reference workspaces and workspace keys). */
export const CONSOLE_MIGRATIONS = [ConsoleOauth1790000003010, ConsoleOauthCodeFamily1790000003610];
