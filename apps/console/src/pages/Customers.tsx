// Customer search: developer user id, anonymous id, cdcust_ id, email or a rail id.
import { useState } from 'react';
import { api, call } from '../api/client';
import type { CustomerMatch } from '../api/types';
import { DataTable } from '../components/DataTable';
import { Field, MutationStatus } from '../components/ui';
import { useMutation } from '../components/useMutation';
import { useEnv } from '../env';
import { href } from '../router';
import { usePageTitle } from '../components/page';

export function Customers({ projectId }: { projectId: string }) {
  usePageTitle('Customers');
  const env = useEnv();
  const [q, setQ] = useState('');
  const [results, setResults] = useState<CustomerMatch[]>();
  const search = useMutation(async () => {
    const list = await call(api.GET('/admin/v1/projects/{projectId}/customers', { params: { path: { projectId }, query: { env, q: q.trim(), limit: '25' } } }));
    setResults(list.data);
  });
  const submit = () => {
    if (q.trim().length < 3) return search.fail(new Error('Type at least 3 characters: an id, an email or a rail id, matched exactly.'));
    void search.run();
  };
  return (
    <>
      <h1>Customers</h1>
      <form
        role="search"
        className="inline-form"
        onSubmit={(event) => {
          event.preventDefault();
          submit();
        }}
      >
        <Field
          label="Find a customer"
          name="q"
          hint="User id, anonymous id, cdcust_ id, email, or a rail id (original transaction id, cus_…, purchase token)"
          value={q}
          onChange={setQ}
        />
        <button type="submit" className="primary" disabled={search.pending}>
          Search
        </button>
      </form>
      <MutationStatus mutation={search} />
      {search.pending && <p role="status">Searching…</p>}
      {results && (
        <DataTable
          rows={results}
          rowKey={(customer) => customer.serviceCustomerId}
          caption={`Matches in ${env}`}
          empty={`No customer matches “${q}” in ${env}.`}
          columns={[
            {
              header: 'Customer',
              cell: (customer) => (
                <a href={href(`/p/${projectId}/customers/${encodeURIComponent(customer.serviceCustomerId)}`)}>{customer.serviceCustomerId}</a>
              ),
            },
            { header: 'User id', cell: (customer) => customer.userId ?? '—' },
            { header: 'Email', cell: (customer) => customer.email ?? '—' },
            { header: 'Anonymous ids', cell: (customer) => customer.anonymousIds.join(', ') || '—' },
            { header: 'Matched by', cell: (customer) => customer.matchedBy.replace('_', ' ') },
          ]}
        />
      )}
    </>
  );
}
