// A write from a page: pending while it runs, its error (announced by the page's FormAlert or
// MutationStatus), an optional success note, and the page's data reloaded after success.
import { useCallback, useEffect, useRef, useState } from 'react';

export interface Mutation<A extends unknown[]> {
  /** Runs the write; true when it succeeded. */
  run: (...args: A) => Promise<boolean>;
  pending: boolean;
  error: unknown;
  /** The success note the write returned, until the next run. */
  done?: string;
  /** Shows an error found before calling the service (the API's rules checked as you type). */
  fail: (error: unknown) => void;
  reset: () => void;
}

export function useMutation<A extends unknown[]>(
  write: (...args: A) => Promise<string | void>,
  options: { reload?: () => void; onError?: 'throw' } = {},
): Mutation<A> {
  const [state, setState] = useState<{ pending: boolean; error: unknown; done?: string }>({ pending: false, error: undefined });
  const live = useRef(true);
  useEffect(() => {
    live.current = true;
    return () => {
      live.current = false;
    };
  }, []);
  const latest = useRef({ write, options });
  latest.current = { write, options };
  const run = useCallback(async (...args: A) => {
    setState({ pending: true, error: undefined });
    try {
      const done = await latest.current.write(...args);
      if (live.current) setState({ pending: false, error: undefined, done: done || undefined });
      latest.current.options.reload?.();
      return true;
    } catch (error) {
      // 'throw': the caller shows the error (a confirmation dialog shows it inside itself).
      const rethrow = latest.current.options.onError === 'throw';
      if (live.current) setState({ pending: false, error: rethrow ? undefined : error });
      if (rethrow) throw error;
      return false;
    }
  }, []);
  const fail = useCallback((error: unknown) => setState({ pending: false, error }), []);
  const reset = useCallback(() => setState({ pending: false, error: undefined }), []);
  return { run, fail, reset, ...state };
}
