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

export { match } from './rules';
