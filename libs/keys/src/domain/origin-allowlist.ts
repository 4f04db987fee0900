import { getDomain } from 'tldts';

/**
 * Allowlist entries are `scheme://host[:port]` or `https://*.<domain>[:port]`. Matching is
 * exact and case-sensitive; a wildcard matches exactly one subdomain label, never nested
 * labels and never the bare domain.
 */
const ORIGIN_PATTERN = /^([a-z][a-z0-9+.-]*):\/\/([^/:?#\s]+)(?::(\d{1,5}))?$/;
const LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

export function isValidAllowlistEntry(entry: unknown): boolean {
  if (typeof entry !== 'string') return false;
  const match = ORIGIN_PATTERN.exec(entry);
  if (!match) return false;
  const host = match[2];
  const labels = host.split('.');
  if (labels[0] === '*') {
    const rest = labels.slice(1);
    return rest.length >= 2 && rest.every((l) => LABEL.test(l));
  }
  return labels.every((l) => LABEL.test(l)) || /^\[[0-9a-fA-F:.]+\]$/.test(host);
}

export function originAllowed(origin: string | undefined, allowlist: readonly string[]): boolean {
  if (!origin || allowlist.length === 0) return false;
  const match = ORIGIN_PATTERN.exec(origin);
  if (!match) return false;
  const [, scheme, host, port] = match;
  for (const entry of allowlist) {
    if (entry === origin) return true;
    const wildcard = ORIGIN_PATTERN.exec(entry);
    if (!wildcard || !wildcard[2].startsWith('*.')) continue;
    const [, entryScheme, entryHost, entryPort] = wildcard;
    if (entryScheme !== scheme || (entryPort ?? '') !== (port ?? '')) continue;
    const suffix = entryHost.slice(1); // ".example.com"
    if (!host.endsWith(suffix)) continue;
    const label = host.slice(0, host.length - suffix.length);
    if (LABEL.test(label)) return true;
  }
  return false;
}

/**
 * What the first heartbeat of a web app with an empty allowlist learns: the observed origin
 * and its registrable apex (public-suffix aware), same scheme and port.
 */
export function originsToLearn(origin: string | undefined): string[] {
  if (!origin) return [];
  const match = ORIGIN_PATTERN.exec(origin);
  if (!match || !isValidAllowlistEntry(origin) || origin.includes('*')) return [];
  const [, scheme, host, port] = match;
  const apex = getDomain(host, { allowPrivateDomains: true });
  const learned = [origin];
  if (apex && apex !== host) learned.push(`${scheme}://${apex}${port ? `:${port}` : ''}`);
  return learned;
}
