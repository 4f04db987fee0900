import { createHmac, randomBytes } from 'node:crypto';
import { secretsEqual } from './operator-token.js';

/** The console's session cookie: signed, so any replica verifies it without shared state. */
export const CONSOLE_SESSION_COOKIE = 'console_session';
/** The header a cookie-authenticated change carries (the value GET /console/api/session returns). */
export const CSRF_HEADER = 'x-csrf-token';
/** A console session lasts 12 hours. */
export const CONSOLE_SESSION_TTL_MS = 12 * 3600 * 1000;

export interface ConsoleSession {
  /** Random, per sign-in; binds the CSRF token to this session. */
  sessionId: string;
  expiresAtMs: number;
}

/**
 * The signing key: derived from OPERATOR_TOKEN (HMAC with a fixed label), so every replica
 * with the same token verifies the same cookies, and changing the token ends every session.
 */
function sessionKey(operatorToken: string): Buffer {
  return createHmac('sha256', operatorToken).update('console-session-signing-key/v1').digest();
}

function mac(operatorToken: string, message: string): string {
  return createHmac('sha256', sessionKey(operatorToken)).update(message).digest('base64url');
}

/** A new session and its cookie value `<sessionId>.<expiresAtMs>.<signature>`. */
export function issueConsoleSession(operatorToken: string, nowMs: number): { session: ConsoleSession; cookieValue: string } {
  const session = { sessionId: randomBytes(18).toString('base64url'), expiresAtMs: nowMs + CONSOLE_SESSION_TTL_MS };
  const payload = `${session.sessionId}.${session.expiresAtMs}`;
  return { session, cookieValue: `${payload}.${mac(operatorToken, `session.${payload}`)}` };
}

/** The session a cookie value names, when its signature holds and it has not expired; otherwise null. */
export function verifyConsoleSession(operatorToken: string, cookieValue: string | undefined, nowMs: number): ConsoleSession | null {
  if (!cookieValue) return null;
  const parts = cookieValue.split('.');
  if (parts.length !== 3 || !/^[A-Za-z0-9_-]{16,64}$/.test(parts[0]) || !/^\d{1,16}$/.test(parts[1])) return null;
  const payload = `${parts[0]}.${parts[1]}`;
  if (!secretsEqual(parts[2], mac(operatorToken, `session.${payload}`))) return null;
  const expiresAtMs = Number(parts[1]);
  if (expiresAtMs <= nowMs) return null;
  return { sessionId: parts[0], expiresAtMs };
}

/** The CSRF token of a session: an HMAC of its id (no server state; useless without the session). */
export function csrfTokenOf(operatorToken: string, session: ConsoleSession): string {
  return mac(operatorToken, `csrf.${session.sessionId}`);
}

export function csrfTokenMatches(operatorToken: string, session: ConsoleSession, header: string | string[] | undefined): boolean {
  return typeof header === 'string' && header.length > 0 && secretsEqual(header, csrfTokenOf(operatorToken, session));
}

/** One cookie's value from a Cookie header (the first of that name), or undefined. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** `Set-Cookie` for a session (`Secure` in production), or, without a value, one that clears it. */
export function consoleSessionSetCookie(value: string | null, secure: boolean): string {
  const attributes = ['Path=/', 'HttpOnly', 'SameSite=Strict', `Max-Age=${value === null ? 0 : CONSOLE_SESSION_TTL_MS / 1000}`];
  if (secure) attributes.push('Secure');
  return [`${CONSOLE_SESSION_COOKIE}=${value ?? ''}`, ...attributes].join('; ');
}
