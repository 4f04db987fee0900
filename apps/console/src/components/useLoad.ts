// Loads a page's data (at most a few calls), with loading / error states and a reload.
import { useCallback, useEffect, useState } from 'react';

export type Load<T> =
  { state: 'loading'; reload: () => void } | { state: 'error'; error: Error; reload: () => void } | { state: 'ready'; data: T; reload: () => void };

export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Load<T> {
  const [result, setResult] = useState<{ state: 'loading' } | { state: 'error'; error: Error } | { state: 'ready'; data: T }>({ state: 'loading' });
  const [round, setRound] = useState(0);
  const reload = useCallback(() => setRound((n) => n + 1), []);
  useEffect(() => {
    let live = true;
    load().then(
      (data) => live && setResult({ state: 'ready', data }),
      (error: Error) => live && setResult({ state: 'error', error }),
    );
    return () => {
      live = false;
    };
  }, [...deps, round]);
  return { ...result, reload } as Load<T>;
}
