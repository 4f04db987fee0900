// The console session (`/console/api/session`): a signed HttpOnly cookie set by the service.
import { ApiFailure, raw, setCsrfToken } from './client';

export interface ConsoleSession {
  object: 'console_session';
  expiresAt: number;
  csrfToken: string;
}

/** The current session, or null when signed out (401). */
export async function currentSession(): Promise<ConsoleSession | null> {
  const response = await fetch('/console/api/session', { credentials: 'same-origin', headers: { Accept: 'application/json' } });
  if (response.status === 401) return null;
  if (!response.ok) throw new ApiFailure(response.status, 'http_' + response.status, `The service answered ${response.status}.`);
  const session = (await response.json()) as ConsoleSession;
  setCsrfToken(session.csrfToken);
  return session;
}

export async function signIn(token: string): Promise<void> {
  const response = await fetch('/console/api/session', {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify({ token }),
  });
  if (response.status === 401) throw new ApiFailure(401, 'invalid_operator_token', 'That operator token is not valid.', 'token');
  if (response.status === 429) throw new ApiFailure(429, 'rate_limited', 'Too many attempts: wait a minute, then try again.', 'token');
  if (!response.ok) throw new ApiFailure(response.status, 'http_' + response.status, `The service answered ${response.status}.`);
}

export async function signOut(): Promise<void> {
  await raw('DELETE', '/console/api/session');
  setCsrfToken('');
}

export { nextAfterSignIn } from '../rules';
