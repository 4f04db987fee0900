// The console's pure rules (no DOM, no React): unit-tested in test/unit/console-rules.spec.ts.

/** After sign-in, the OAuth connector flow continues at `?next=/oauth/authorize…`; nothing else is followed. */
export function nextAfterSignIn(search: string): string | null {
  const next = new URLSearchParams(search).get('next');
  return next && next.startsWith('/oauth/authorize') && !next.startsWith('//') ? next : null;
}

/** Matches `/p/:projectId/customers/:customerId` style patterns; null when the path does not fit. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/');
  const got = path.split('?')[0].split('/');
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    if (want[i].startsWith(':')) {
      if (!got[i]) return null;
      params[want[i].slice(1)] = decodeURIComponent(got[i]);
    } else if (want[i] !== got[i]) return null;
  }
  return params;
}

/** The form field an API error belongs to: its `param`, else the field its message starts with ("reason must be …", "url: …"). */
export function fieldOfError(message: string, param: string | undefined, fields: readonly string[]): string | undefined {
  if (param) return fields.includes(param) ? param : undefined;
  const first = message.split(/[\s:.[]/)[0];
  return fields.includes(first) ? first : undefined;
}
