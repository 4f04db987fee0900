import {
  CONSOLE_SESSION_TTL_MS,
  consoleSessionSetCookie,
  cookieValue,
  csrfTokenMatches,
  csrfTokenOf,
  issueConsoleSession,
  verifyConsoleSession,
} from '../../libs/platform/src/policy/console-session.js';
import { redirectUriAllowed, validateRegistration } from '../../libs/console/src/oauth/registration.js';

const TOKEN = 'op_unit_token_0123456789';

describe('console session cookie', () => {
  it('verifies under the same operator token until it expires; any change to it or to the token fails', () => {
    const { session, cookieValue: value } = issueConsoleSession(TOKEN, 1_000);
    expect(session.expiresAtMs).toBe(1_000 + CONSOLE_SESSION_TTL_MS);
    expect(verifyConsoleSession(TOKEN, value, 2_000)).toEqual(session);
    expect(verifyConsoleSession(TOKEN, value, session.expiresAtMs)).toBeNull();
    expect(verifyConsoleSession(`${TOKEN}x`, value, 2_000)).toBeNull();
    const [id, exp, sig] = value.split('.');
    expect(verifyConsoleSession(TOKEN, `${id}.${Number(exp) + 1}.${sig}`, 2_000)).toBeNull();
    expect(verifyConsoleSession(TOKEN, `${id}.${exp}`, 2_000)).toBeNull();
    expect(verifyConsoleSession(TOKEN, undefined, 2_000)).toBeNull();
  });

  it('the CSRF token is bound to one session', () => {
    const a = issueConsoleSession(TOKEN, 0).session;
    const b = issueConsoleSession(TOKEN, 0).session;
    expect(csrfTokenMatches(TOKEN, a, csrfTokenOf(TOKEN, a))).toBe(true);
    expect(csrfTokenMatches(TOKEN, a, csrfTokenOf(TOKEN, b))).toBe(false);
    expect(csrfTokenMatches(TOKEN, a, undefined)).toBe(false);
    expect(csrfTokenMatches(TOKEN, a, [csrfTokenOf(TOKEN, a)])).toBe(false);
  });

  it('cookie header parsing and Set-Cookie attributes', () => {
    expect(cookieValue('a=1; console_session=x.y.z; b=2', 'console_session')).toBe('x.y.z');
    expect(cookieValue('a=1', 'console_session')).toBeUndefined();
    expect(consoleSessionSetCookie('v', true)).toBe('console_session=v; Path=/; HttpOnly; SameSite=Strict; Max-Age=43200; Secure');
    expect(consoleSessionSetCookie(null, false)).toBe('console_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0');
  });
});

describe('OAuth client registration', () => {
  it('redirect URIs: https, or loopback http on any port', () => {
    expect(redirectUriAllowed('https://assistant.example.com/cb')).toBe(true);
    expect(redirectUriAllowed('http://127.0.0.1:49152/callback')).toBe(true);
    expect(redirectUriAllowed('http://[::1]:8080/cb')).toBe(true);
    for (const bad of [
      'http://example.com/cb',
      'http://localhost:8080/cb',
      'https://a.example.com/cb#x',
      'https://u:p@a.example.com/',
      'custom:/cb',
      'not a url',
    ]) {
      expect({ bad, ok: redirectUriAllowed(bad) }).toEqual({ bad, ok: false });
    }
  });

  it('metadata errors name RFC 7591 codes', () => {
    expect(validateRegistration({ client_name: 'CLI', redirect_uris: ['http://127.0.0.1:1/cb'] })).toEqual({
      clientName: 'CLI',
      redirectUris: ['http://127.0.0.1:1/cb'],
      applicationType: 'native',
    });
    expect(validateRegistration({ redirect_uris: ['http://127.0.0.1:1/cb'] })).toMatchObject({ error: 'invalid_client_metadata' });
    expect(validateRegistration({ client_name: 'x', redirect_uris: 'http://127.0.0.1:1/cb' })).toMatchObject({ error: 'invalid_redirect_uri' });
    expect(validateRegistration({ client_name: 'x', redirect_uris: ['http://127.0.0.1:1/cb'], application_type: 'desktop' })).toMatchObject({
      error: 'invalid_client_metadata',
    });
  });
});
