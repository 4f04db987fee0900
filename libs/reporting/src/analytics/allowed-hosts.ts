/**
 * Whether `host` is the host of one of an app's allowed origins: an exact host
 * (`https://app.example.com`, any scheme and port) or a subdomain of a wildcard entry
 * (`https://*.example.com` admits `tenant.example.com`, not `example.com`). Case-insensitive.
 */
export function hostAllowed(host: string, allowedOrigins: readonly string[]): boolean {
  const wanted = host.trim().toLowerCase();
  if (wanted.length === 0 || wanted.length > 253) return false;
  for (const origin of allowedOrigins) {
    const m = /^[a-z][a-z0-9+.-]*:\/\/([^/:]+)(?::\d+)?\/?$/i.exec(origin.trim());
    if (!m) continue;
    const entry = m[1].toLowerCase();
    if (entry.startsWith('*.')) {
      const suffix = entry.slice(1);
      if (wanted.endsWith(suffix) && wanted.length > suffix.length) return true;
    } else if (entry === wanted) {
      return true;
    }
  }
  return false;
}
