// Hash routing under /console/ (#/p/proj_…/customers): no server fallback needed.
import { useEffect, useState } from 'react';

export function currentPath(): string {
  return window.location.hash.replace(/^#/, '') || '/';
}

export function useHashPath(): string {
  const [path, setPath] = useState(currentPath);
  useEffect(() => {
    const update = () => setPath(currentPath());
    window.addEventListener('hashchange', update);
    return () => window.removeEventListener('hashchange', update);
  }, []);
  return path;
}

export function href(path: string): string {
  return '#' + path;
}

export function navigate(path: string): void {
  window.location.hash = path;
}

/** Matches `/p/:projectId/customers/:customerId` style patterns; null when the path does not fit. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/');
  const got = path.split('?')[0].split('/');
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    if (want[i].startsWith(':')) params[want[i].slice(1)] = decodeURIComponent(got[i]);
    else if (want[i] !== got[i]) return null;
  }
  return params;
}
