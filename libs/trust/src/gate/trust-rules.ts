/** The trust gate's pure rules: normalising the candidates and matching them against a project's lists. */

export const BLOCK_KINDS = ['user', 'email', 'domain', 'ip'] as const;
export type BlockKind = (typeof BLOCK_KINDS)[number];

export interface BlockRule {
  kind: BlockKind;
  value: string;
  reason: string;
}

export interface TrustSettings {
  supportEmail: string | null;
  blocks: BlockRule[];
  review: { emailDomains: string[] };
}

export const EMPTY_TRUST_SETTINGS: TrustSettings = { supportEmail: null, blocks: [], review: { emailDomains: [] } };

/** What a request offers to be matched: developer user ids, an email, a domain, an IP address. */
export interface TrustCandidates {
  userIds?: readonly string[];
  email?: string | null;
  domain?: string | null;
  ip?: string | null;
}

export interface BlockMatch {
  kind: BlockKind;
  value: string;
  /** `blocklist:<kind>` */
  blockReason: string;
  /** `<kind>:<value>` */
  blockedKey: string;
  /** The operator's reason for the rule (kept in the audit entry, never returned). */
  ruleReason: string;
}

/** Emails compare case-insensitively, trimmed. */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** Domains compare case-insensitively, without a leading `@` or a trailing dot. */
export function normaliseDomain(domain: string): string {
  return domain.trim().toLowerCase().replace(/^@+/, '').replace(/\.+$/, '');
}

export function domainOfEmail(email: string): string | null {
  const at = email.lastIndexOf('@');
  if (at < 1 || at === email.length - 1) return null;
  return normaliseDomain(email.slice(at + 1));
}

/** A domain rule covers the domain itself and every subdomain of it (`evil.example` covers `mx.evil.example`). */
export function domainCovered(domain: string, ruleDomain: string): boolean {
  return domain === ruleDomain || domain.endsWith(`.${ruleDomain}`);
}

/**
 * The first block rule the candidates match, in the order user, email, domain (the given one,
 * then the email's), ip; null when none does.
 */
export function matchBlock(settings: TrustSettings, candidates: TrustCandidates): BlockMatch | null {
  const email = candidates.email ? normaliseEmail(candidates.email) : null;
  const domains = [candidates.domain ? normaliseDomain(candidates.domain) : null, email ? domainOfEmail(email) : null].filter((d): d is string => Boolean(d));
  const ip = candidates.ip ? candidates.ip.trim() : null;
  const found = (rule: BlockRule, value: string): BlockMatch => ({
    kind: rule.kind,
    value,
    blockReason: `blocklist:${rule.kind}`,
    blockedKey: `${rule.kind}:${rule.value}`,
    ruleReason: rule.reason,
  });
  for (const kind of BLOCK_KINDS) {
    for (const rule of settings.blocks) {
      if (rule.kind !== kind) continue;
      if (kind === 'user' && candidates.userIds?.includes(rule.value)) return found(rule, rule.value);
      if (kind === 'email' && email !== null && email === normaliseEmail(rule.value)) return found(rule, email);
      if (kind === 'domain') {
        const hit = domains.find((d) => domainCovered(d, normaliseDomain(rule.value)));
        if (hit) return found(rule, hit);
      }
      if (kind === 'ip' && ip !== null && ip === rule.value.trim()) return found(rule, ip);
    }
  }
  return null;
}

/** The review rule: an email (or the given domain) under one of the review domains; its reason is `review:email_domain`. */
export function matchReview(settings: TrustSettings, candidates: TrustCandidates): { blockReason: string; domain: string } | null {
  const email = candidates.email ? normaliseEmail(candidates.email) : null;
  const domains = [candidates.domain ? normaliseDomain(candidates.domain) : null, email ? domainOfEmail(email) : null].filter((d): d is string => Boolean(d));
  for (const rule of settings.review.emailDomains) {
    const hit = domains.find((d) => domainCovered(d, normaliseDomain(rule)));
    if (hit) return { blockReason: 'review:email_domain', domain: hit };
  }
  return null;
}

/** The support code of a decision: 8 characters `xxxx-xxxx` taken from its event id. */
export function supportReference(eventId: string): string {
  const tail = eventId
    .replace(/[^a-z0-9]/gi, '')
    .slice(-8)
    .toLowerCase()
    .padStart(8, '0');
  return `${tail.slice(0, 4)}-${tail.slice(4)}`;
}
