// Customer search: developer user id, anonymous id, cdcust_ id, email or a rail id.
import { useState } from 'react';
import { api, call } from '../api/client';
import type { CustomerMatch } from '../api/types';
import { Alert, Empty, Field } from '../components/ui';
import { useEnv } from '../env';
import { href } from '../router';

export function Customers({ projectId }: { projectId: string }) {
  const env = useEnv();
  const [q, setQ] = useState('');
  const [results, setResults] = useState<CustomerMatch[]>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const search = async () => {
    if (q.trim().length < 3) return setError('Type at least 3 characters: an id, an email or a rail id, matched exactly.');
    setBusy(true);
    setError(undefined);
    try {
      const list = await call(
        api.GET('/admin/v1/projects/{projectId}/customers', { params: { path: { projectId }, query: { env, q: q.trim(), limit: '25' } } }),
      );
      setResults(list.data);
    } catch (failure) {
      setError((failure as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <h1>Customers</h1>
      <form
        role="search"
        className="inline-form"
        onSubmit={(event) => {
          event.preventDefault();
          void search();
        }}
      >
        <Field
          label="Find a customer"
          name="q"
          hint="User id, anonymous id, cdcust_ id, email, or a rail id (original transaction id, cus_…, purchase token)"
          value={q}
          onChange={setQ}
        />
        <button type="submit" className="primary" disabled={busy}>
          Search
        </button>
      </form>
      {error && <Alert>{error}</Alert>}
      {busy && <p role="status">Searching…</p>}
      {results && results.length === 0 && (
        <Empty>
          No customer matches “{q}” in {env}.
        </Empty>
      )}
      {results && results.length > 0 && (
        <table tabIndex={0}>
          <caption>Matches in {env}</caption>
          <thead>
            <tr>
              <th scope="col">Customer</th>
              <th scope="col">User id</th>
              <th scope="col">Email</th>
              <th scope="col">Anonymous ids</th>
              <th scope="col">Matched by</th>
            </tr>
          </thead>
          <tbody>
            {results.map((customer) => (
              <tr key={customer.serviceCustomerId}>
                <td>
                  <a href={href(`/p/${projectId}/customers/${encodeURIComponent(customer.serviceCustomerId)}`)}>{customer.serviceCustomerId}</a>
                </td>
                <td>{customer.userId ?? '—'}</td>
                <td>{customer.email ?? '—'}</td>
                <td>{customer.anonymousIds.join(', ') || '—'}</td>
                <td>{customer.matchedBy.replace('_', ' ')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
