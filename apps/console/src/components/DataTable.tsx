// The console's one table: columns with header and cell renderers, a caption for screen readers,
// an empty state, and optional sorting (by a column's value) and paging (a page at a time).
import { type ReactNode, useMemo, useState } from 'react';
import { Empty } from './ui';

export interface Column<T> {
  header: string;
  cell: (row: T) => ReactNode;
  /** Makes the column sortable: the value rows are ordered by. */
  sortValue?: (row: T) => string | number | null | undefined;
  className?: string;
}

export interface Sort {
  column: string;
  direction: 'ascending' | 'descending';
}

interface Props<T> {
  rows: readonly T[];
  columns: Column<T>[];
  rowKey: (row: T) => string;
  /** Names the table for screen readers; shown unless `captionHidden`. */
  caption: ReactNode;
  captionHidden?: boolean;
  /** Shown instead of the table when there are no rows. */
  empty: ReactNode;
  /** On a phone each row becomes a card, each cell under its column's name. */
  stackNarrow?: boolean;
  /** The order before a person picks a column (none: the rows' own order). */
  initialSort?: Sort;
  /** Rows per page; all rows when absent. */
  pageSize?: number;
}

function compare(a: string | number | null | undefined, b: string | number | null | undefined): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return 1;
  if (b === null || b === undefined) return -1;
  return typeof a === 'number' && typeof b === 'number' ? a - b : String(a).localeCompare(String(b));
}

/** Sorting of rows by a column's value: the hook DataTable uses, also for pages that sort elsewhere. */
export function useSort<T>(rows: readonly T[], columns: Column<T>[], initial?: Sort) {
  const [sort, setSort] = useState<Sort | undefined>(initial);
  const sorted = useMemo(() => {
    const column = columns.find((c) => c.header === sort?.column);
    if (!sort || !column?.sortValue) return rows;
    const sign = sort.direction === 'ascending' ? 1 : -1;
    return [...rows].sort((a, b) => sign * compare(column.sortValue!(a), column.sortValue!(b)));
  }, [rows, columns, sort]);
  const toggle = (column: string) =>
    setSort((current) =>
      current?.column === column ? { column, direction: current.direction === 'ascending' ? 'descending' : 'ascending' } : { column, direction: 'descending' },
    );
  return { sorted, sort, toggle };
}

/** Paging of rows already loaded: the hook DataTable uses. */
export function usePage<T>(rows: readonly T[], pageSize?: number) {
  const [page, setPage] = useState(0);
  const pages = pageSize ? Math.max(1, Math.ceil(rows.length / pageSize)) : 1;
  const current = Math.min(page, pages - 1);
  const visible = pageSize ? rows.slice(current * pageSize, (current + 1) * pageSize) : rows;
  return { visible, page: current, pages, setPage, first: pageSize ? current * pageSize + 1 : 1 };
}

export function DataTable<T>({ rows, columns, rowKey, caption, captionHidden, empty, stackNarrow, initialSort, pageSize }: Props<T>) {
  const { sorted, sort, toggle } = useSort(rows, columns, initialSort);
  const paging = usePage(sorted, pageSize);
  if (rows.length === 0) return <Empty>{empty}</Empty>;
  return (
    <>
      <table tabIndex={0} className={stackNarrow ? 'stack-narrow' : undefined}>
        <caption className={captionHidden ? 'visually-hidden' : undefined}>{caption}</caption>
        <thead>
          <tr>
            {columns.map((column) => (
              <th key={column.header} scope="col" aria-sort={sort?.column === column.header ? sort.direction : undefined}>
                {column.sortValue ? (
                  <button type="button" className="sort" onClick={() => toggle(column.header)}>
                    {column.header}
                    <span aria-hidden="true">{sort?.column === column.header ? (sort.direction === 'ascending' ? ' ▲' : ' ▼') : ' ↕'}</span>
                  </button>
                ) : (
                  column.header
                )}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {paging.visible.map((row) => (
            <tr key={rowKey(row)}>
              {columns.map((column) => (
                <td key={column.header} data-label={column.header} className={column.className}>
                  {column.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      {paging.pages > 1 && (
        <nav className="pager" aria-label={`Pages of ${typeof caption === 'string' ? caption : 'the table'}`}>
          <button type="button" disabled={paging.page === 0} onClick={() => paging.setPage(paging.page - 1)}>
            Previous
          </button>
          <span role="status">
            Rows {paging.first} to {paging.first + paging.visible.length - 1} of {rows.length}
          </span>
          <button type="button" disabled={paging.page >= paging.pages - 1} onClick={() => paging.setPage(paging.page + 1)}>
            Next
          </button>
        </nav>
      )}
    </>
  );
}
