import { CONSOLE_CSP } from '../console-headers.js';

/** Scopes a connector may ask for, with what they let it read; the identity ones are opt-in. */
export const SCOPE_LABELS: Readonly<Record<string, string>> = {
  'reporting:aggregate': 'Aggregate reports (counts and totals)',
  'revenue:read': 'Revenue figures',
  'errors:read': 'Error issues',
  'buckets:read': 'Read-cost buckets',
  'reporting:identity': 'Rows naming your own user ids (ranked customers, affected users)',
  'crossmatch:read': 'Cross-matching one customer across rails',
  'workspace:write': 'Create projects and apps in the workspace',
};
export const OPT_IN_SCOPES = ['reporting:identity', 'crossmatch:read'];
const DEFAULT_SCOPES = ['reporting:aggregate', 'revenue:read', 'errors:read', 'buckets:read'];

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** The CSP of the consent page: the console's, with the client's redirect origin allowed as a form target (the approval redirects there). */
export function consentCsp(redirectUri: string): string {
  return CONSOLE_CSP.replace("form-action 'self'", `form-action 'self' ${new URL(redirectUri).origin}`);
}

export interface ConsentPage {
  clientName: string;
  redirectUri: string;
  workspaces: { id: string; name: string }[];
  /** Scopes requested (known ones); none requested offers the default set. */
  requested: string[];
  /** Hidden fields carried to the approval: the authorization request's parameters and the CSRF token. */
  hidden: Record<string, string>;
}

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
  `<title>${escapeHtml(title)}</title><link rel="stylesheet" href="/oauth/assets/consent.css"></head><body><main>${body}</main></body></html>`;

/** The server-rendered consent page (no script): client, workspace picker, scopes, approve or deny. */
export function renderConsentPage(p: ConsentPage): string {
  const scopes = p.requested.length > 0 ? p.requested : [...DEFAULT_SCOPES, ...OPT_IN_SCOPES];
  const hidden = Object.entries(p.hidden)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('');
  const workspaces = p.workspaces.map((w) => `<option value="${escapeHtml(w.id)}">${escapeHtml(w.name)} (${escapeHtml(w.id)})</option>`).join('');
  const boxes = scopes
    .map((scope, i) => {
      const checked = OPT_IN_SCOPES.includes(scope) ? '' : ' checked';
      return (
        `<li><input type="checkbox" id="scope-${i}" name="scope" value="${escapeHtml(scope)}"${checked}>` +
        `<label for="scope-${i}"><code>${escapeHtml(scope)}</code> ${escapeHtml(SCOPE_LABELS[scope] ?? scope)}</label></li>`
      );
    })
    .join('');
  const form =
    p.workspaces.length === 0
      ? `<p role="alert">There is no workspace to connect yet: create one in the console first.</p>`
      : `<form method="post" action="/oauth/authorize">${hidden}` +
        `<label for="workspace">Workspace</label><select id="workspace" name="workspace">${workspaces}</select>` +
        `<fieldset><legend>What it may read</legend><ul>${boxes}</ul></fieldset>` +
        `<div class="actions"><button type="submit" name="decision" value="approve">Approve</button>` +
        `<button type="submit" name="decision" value="deny" class="secondary">Deny</button></div></form>`;
  return page(
    `Connect ${p.clientName}`,
    `<h1>Connect <strong>${escapeHtml(p.clientName)}</strong></h1>` +
      `<p>It will receive a workspace key and return to <code>${escapeHtml(p.redirectUri)}</code>.</p>${form}`,
  );
}

/** A page for a request that cannot be sent back to the client (unknown client or redirect URI). */
export function renderErrorPage(message: string): string {
  return page('Sign-in request refused', `<h1>Sign-in request refused</h1><p role="alert">${escapeHtml(message)}</p>`);
}

export const CONSENT_CSS = `body{font:15px/1.5 system-ui,sans-serif;margin:0;background:#f6f6f4;color:#1a1a1a}
main{max-width:34rem;margin:3rem auto;padding:2rem;background:#fff;border-radius:8px;box-shadow:0 1px 3px #0002}
h1{font-size:1.4rem;margin-top:0}label{display:block;margin:.25rem 0}select{width:100%;padding:.4rem;font:inherit}
fieldset{border:1px solid #ccc;border-radius:6px;margin:1rem 0}ul{list-style:none;padding:0;margin:0}
li{display:flex;gap:.5rem;align-items:flex-start;margin:.4rem 0}li label{margin:0}
.actions{display:flex;gap:.75rem}button{font:inherit;padding:.55rem 1.2rem;border-radius:6px;border:1px solid #1d4ed8;background:#1d4ed8;color:#fff;cursor:pointer}
button.secondary{background:#fff;color:#1d4ed8}button:focus-visible,select:focus-visible,input:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}
code{font-size:.9em}
`;
