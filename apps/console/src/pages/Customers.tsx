// The customer list: every customer of the environment, a page at a time (cursor), with a partial
// search, filters (state, rail, product, paying), a server-side sort and a CSV export of the
// filtered list. One call per page.
import { type ReactNode, useId, useState } from 'react';
import { api, call } from '../api/client';
import type { CustomerListItem, CustomerListPage } from '../api/types';
import { DataTable } from '../components/DataTable';
import { usePageTitle } from '../components/page';
import { Field, Loaded } from '../components/ui';
import { useLoad } from '../components/useLoad';
import { useEnv } from '../env';
import { date, money } from '../format';
import { href } from '../router';
import { STATE_FILTERS, StateBadges } from './customerStates';

const PAGE_SIZE = 25;

interface Filters {
  q: string;
  state: string;
  rail: string;
  product: string;
  paying: string;
  sort: string;
  order: string;
}

const NO_FILTERS: Filters = { q: '', state: '', rail: '', product: '', paying: '', sort: 'created', order: 'desc' };

function Choice({
  label,
  name,
  value,
  options,
  onChange,
}: {
  label: string;
  name: string;
  value: string;
  options: [string, string][];
  onChange: (value: string) => void;
}) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} name={name} value={value} onChange={(event) => onChange(event.target.value)}>
        {options.map(([option, text]) => (
          <option key={option} value={option}>
            {text}
          </option>
        ))}
      </select>
    </div>
  );
}

/** The list's query: only the filters that are set, and always the partial match. */
function listQuery(env: string, filters: Filters): Record<string, string> {
  const query: Record<string, string> = { env, match: 'partial' };
  for (const [name, value] of Object.entries(filters)) if (value.trim() !== '') query[name] = value.trim();
  return query;
}

export function Customers({ projectId }: { projectId: string }) {
  usePageTitle('Customers');
  const env = useEnv();
  const [draft, setDraft] = useState('');
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  // The cursors of the pages before the current one (the first page has none).
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const page = useLoad(
    async () =>
      (await call(
        api.GET('/admin/v1/projects/{projectId}/customers', {
          params: { path: { projectId }, query: { ...listQuery(env, filters), limit: String(PAGE_SIZE), ...(cursor ? { cursor } : {}) } },
        }),
      )) as CustomerListPage,
    [projectId, env, JSON.stringify(filters), cursor],
  );
  const change = (name: keyof Filters) => (value: string) => {
    setFilters((current) => ({ ...current, [name]: value }));
    setCursors([]);
  };
  const exportQuery = new URLSearchParams(listQuery(env, filters));
  exportQuery.delete('match');
  const exportHref = `/admin/v1/projects/${encodeURIComponent(projectId)}/customers.csv?${exportQuery.toString()}`;
  return (
    <>
      <h1>Customers</h1>
      <form
        role="search"
        className="inline-form"
        onSubmit={(event) => {
          event.preventDefault();
          change('q')(draft);
        }}
      >
        <Field
          label="Find a customer"
          name="q"
          hint="Start of a user id, cdcust_ id or rail id (original transaction id, sub_…, cus_…, purchase token), or any part of an email; any case"
          value={draft}
          onChange={setDraft}
        />
        <button type="submit" className="primary">
          Search
        </button>
      </form>
      <div className="filters inline-form" role="group" aria-label="Filters and order">
        <Choice label="State" name="state" value={filters.state} onChange={change('state')} options={[['', 'Any state'], ...STATE_FILTERS]} />
        <Choice
          label="Rail"
          name="rail"
          value={filters.rail}
          onChange={change('rail')}
          options={[
            ['', 'Any rail'],
            ['ios_store', 'App Store'],
            ['card_payments', 'Card payments'],
            ['android_store', 'Play Store'],
          ]}
        />
        <Field label="Product" name="product" value={filters.product} onChange={change('product')} />
        <Choice
          label="Paying"
          name="paying"
          value={filters.paying}
          onChange={change('paying')}
          options={[
            ['', 'Paying or not'],
            ['true', 'Paying'],
            ['false', 'Not paying'],
          ]}
        />
        <Choice
          label="Sort by"
          name="sort"
          value={filters.sort}
          onChange={change('sort')}
          options={[
            ['created', 'Created'],
            ['mrr', 'MRR'],
            ['last_seen', 'Last seen'],
          ]}
        />
        <Choice
          label="Order"
          name="order"
          value={filters.order}
          onChange={change('order')}
          options={[
            ['desc', 'Highest or newest first'],
            ['asc', 'Lowest or oldest first'],
          ]}
        />
      </div>
      <p>
        <a href={exportHref} download={`customers-${env}.csv`}>
          Export CSV
        </a>{' '}
        <small className="muted">every customer of this filtered list, not only this page</small>
      </p>
      <Loaded load={page} label="the customers">
        {(list) => (
          <>
            <DataTable<CustomerListItem>
              rows={list.data}
              rowKey={(customer) => customer.serviceCustomerId}
              caption={`Customers in ${env}`}
              stackNarrow
              empty={filters.q ? `No customer matches “${filters.q}” in ${env}.` : `No customers in ${env} with these filters.`}
              columns={[
                {
                  header: 'Customer',
                  cell: (customer) => (
                    <a href={href(`/p/${projectId}/customers/${encodeURIComponent(customer.serviceCustomerId)}`)}>{customer.serviceCustomerId}</a>
                  ),
                },
                { header: 'User id', cell: (customer) => customer.userId ?? '—' },
                { header: 'Email', cell: (customer) => customer.email ?? '—' },
                { header: 'State', cell: (customer) => <StateBadges states={customer.states} /> },
                { header: 'MRR', cell: (customer) => money(customer.mrr.amountMinor, customer.mrr.currency), className: 'num' },
                { header: 'Rails', cell: (customer) => customer.rails.join(', ') || '—' },
                { header: 'Last seen', cell: (customer) => customer.lastSeenDay ?? 'never' },
                { header: 'Created', cell: (customer) => date(customer.createdAt) },
              ]}
            />
            <Pager
              first={cursors.length === 0}
              more={list.hasMore}
              page={cursors.length + 1}
              onPrevious={() => setCursors((current) => current.slice(0, -1))}
              onNext={() => list.nextCursor && setCursors((current) => [...current, list.nextCursor!])}
            />
          </>
        )}
      </Loaded>
    </>
  );
}

function Pager({
  first,
  more,
  page,
  onPrevious,
  onNext,
}: {
  first: boolean;
  more: boolean;
  page: number;
  onPrevious: () => void;
  onNext: () => void;
}): ReactNode {
  if (first && !more) return null;
  return (
    <nav className="pager" aria-label="Pages of customers">
      <button type="button" disabled={first} onClick={onPrevious}>
        Previous
      </button>
      <span role="status">Page {page}</span>
      <button type="button" disabled={!more} onClick={onNext}>
        Next
      </button>
    </nav>
  );
}
