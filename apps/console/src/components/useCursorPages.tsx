// Pages a list the API pages with a cursor (nextCursor → after): the current page, forward
// and back (the cursors seen so far), back to the first page when the inputs change.
import { useState } from 'react';
import { type Load, useLoad } from './useLoad';

export interface CursorPages<T> {
  page: Load<T>;
  /** 0 on the first page. */
  index: number;
  next: (cursor: string) => void;
  previous: () => void;
}

export function useCursorPages<T>(load: (after: string | undefined) => Promise<T>, deps: unknown[]): CursorPages<T> {
  const key = JSON.stringify(deps);
  const [state, setState] = useState<{ key: string; stack: (string | undefined)[] }>({ key, stack: [undefined] });
  const stack = state.key === key ? state.stack : [undefined];
  const after = stack[stack.length - 1];
  const page = useLoad(() => load(after), [key, after]);
  return {
    page,
    index: stack.length - 1,
    next: (cursor) => setState({ key, stack: [...stack, cursor] }),
    previous: () => setState({ key, stack: stack.slice(0, -1) }),
  };
}

/** Previous / next buttons of a cursor-paged list, with what the page shows. */
export function Pager({
  label,
  index,
  nextCursor,
  onNext,
  onPrevious,
  summary,
}: {
  label: string;
  index: number;
  nextCursor: string | null | undefined;
  onNext: (cursor: string) => void;
  onPrevious: () => void;
  summary?: string;
}) {
  if (index === 0 && !nextCursor && !summary) return null;
  return (
    <nav className="pager" aria-label={`${label} pages`}>
      {summary && <span role="status">{summary}</span>}
      <button type="button" disabled={index === 0} onClick={onPrevious}>
        Previous page
      </button>
      <button type="button" disabled={!nextCursor} onClick={() => nextCursor && onNext(nextCursor)}>
        Next page
      </button>
    </nav>
  );
}
