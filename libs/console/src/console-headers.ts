import type { HttpResponse } from '#platform';

/**
 * The console's (and the sign-in pages') Content-Security-Policy: only same-origin scripts,
 * styles, connections and forms; no inline script or style, no eval, never framed.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "object-src 'none'",
].join('; ');

export const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': CONSOLE_CSP,
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
};

/** Paths whose every answer (errors included) carries the console headers. */
export function isConsolePath(path: string): boolean {
  return path === '/console' || path.startsWith('/console/') || path === '/oauth' || path.startsWith('/oauth/');
}

export function setConsoleHeaders(res: HttpResponse): void {
  for (const [name, value] of Object.entries(CONSOLE_HEADERS)) res.header(name, value);
}
