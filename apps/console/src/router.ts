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

/** Opens a page; `replace` swaps the current history entry (Back does not return to it). */
export function navigate(path: string, options: { replace?: boolean } = {}): void {
  if (options.replace) window.location.replace('#' + path);
  else window.location.hash = path;
}

export { match } from './rules';
