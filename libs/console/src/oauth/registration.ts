/** RFC 7591 client metadata this service accepts: a name, 1 to 10 redirect URIs, native or web. */
export interface Registration {
  clientName: string;
  redirectUris: string[];
  applicationType: 'native' | 'web';
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]']);

/**
 * A redirect URI is `https` (no fragment), or a loopback `http://127.0.0.1:<port>/…` (or
 * `[::1]`) for native apps (RFC 8252 section 7.3: any port, chosen when the app starts).
 */
export function redirectUriAllowed(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.hash || url.username || url.password) return false;
  if (url.protocol === 'https:') return url.hostname.length > 0;
  return url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
}

/** The registration, or the RFC 7591 error (`invalid_redirect_uri`, `invalid_client_metadata`). */
export function validateRegistration(body: Record<string, unknown>): Registration | { error: string; description: string } {
  const name = body.client_name;
  if (typeof name !== 'string' || name.trim().length === 0 || name.length > 100) {
    return { error: 'invalid_client_metadata', description: 'client_name must be a string of 1 to 100 characters' };
  }
  const uris = body.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > 10 || !uris.every((u) => typeof u === 'string' && u.length <= 2000)) {
    return { error: 'invalid_redirect_uri', description: 'redirect_uris must list 1 to 10 URIs' };
  }
  const refused = (uris as string[]).find((u) => !redirectUriAllowed(u));
  if (refused !== undefined) {
    return { error: 'invalid_redirect_uri', description: `redirect_uris: ${refused} must be https or a loopback http://127.0.0.1:<port>/ URI` };
  }
  const type = body.application_type ?? 'native';
  if (type !== 'native' && type !== 'web') return { error: 'invalid_client_metadata', description: 'application_type must be native or web' };
  return { clientName: name.trim(), redirectUris: [...new Set(uris as string[])], applicationType: type };
}
