export { ConsoleModule } from './console.module.js';
export { CONSOLE_CSP, CONSOLE_HEADERS } from './console-headers.js';
