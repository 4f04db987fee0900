// The customer page's panels: entitlements, subscriptions, identities, recent events.
import type { CustomerDetail, CustomerEntitlement } from '../api/types';
import { Empty, Status } from '../components/ui';
import { date, dateMs } from '../format';

function EntitlementTable({ caption, rows }: { caption: string; rows: CustomerEntitlement[] }) {
  if (rows.length === 0) return <Empty>No {caption.toLowerCase()} entitlements.</Empty>;
  return (
    <table tabIndex={0}>
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Key</th>
          <th scope="col">State</th>
          <th scope="col">Source</th>
          <th scope="col">Product</th>
          <th scope="col">Valid until</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={`${row.key}|${row.rail}|${row.subscriptionId}`}>
            <td>{row.key}</td>
            <td>
              <Status value={row.state} />
            </td>
            <td>
              {row.source} ({row.rail})
            </td>
            <td>{row.productId}</td>
            <td>{row.validUntil === null ? 'lifetime' : date(row.validUntil)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function Entitlements({ rows }: { rows: CustomerEntitlement[] }) {
  return (
    <section aria-labelledby="entitlements">
      <h2 id="entitlements">Entitlements</h2>
      <EntitlementTable caption="Active" rows={rows.filter((row) => row.active)} />
      <EntitlementTable caption="Past" rows={rows.filter((row) => !row.active)} />
    </section>
  );
}

export function Subscriptions({ rows }: { rows: CustomerDetail['subscriptions'] }) {
  return (
    <section aria-labelledby="subscriptions">
      <h2 id="subscriptions">Rail subscriptions</h2>
      {rows.length === 0 ? (
        <Empty>No rail subscriptions.</Empty>
      ) : (
        <table tabIndex={0}>
          <thead>
            <tr>
              <th scope="col">Rail</th>
              <th scope="col">Subscription</th>
              <th scope="col">Product</th>
              <th scope="col">State</th>
              <th scope="col">Valid until</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={`${row.rail}|${row.subscriptionId}`}>
                <td>{row.rail}</td>
                <td>
                  <code>{row.subscriptionId}</code>
                </td>
                <td>{row.productId}</td>
                <td>
                  <Status value={row.state} /> {row.railStatus}
                </td>
                <td>{date(row.validUntil)}</td>
                <td>{date(row.updatedAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

export function Identities({ identities }: { identities: CustomerDetail['identities'] }) {
  return (
    <section aria-labelledby="identities">
      <h2 id="identities">Identities</h2>
      <table tabIndex={0}>
        <thead>
          <tr>
            <th scope="col">Type</th>
            <th scope="col">Id</th>
            <th scope="col">Assurance</th>
            <th scope="col">Linked</th>
          </tr>
        </thead>
        <tbody>
          {identities.aliases.map((alias) => (
            <tr key={`${alias.type}|${alias.value}`}>
              <td>{alias.type}</td>
              <td>
                <code>{alias.value}</code>
              </td>
              <td>{alias.assurance}</td>
              <td>{date(alias.createdAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {identities.merges.length > 0 && (
        <>
          <h3>Identify conflicts</h3>
          <ul>
            {identities.merges.map((merge) => (
              <li key={merge.id}>
                {merge.role} side, with <code>{merge.otherCustomerId}</code>: <Status value={merge.status} /> ({date(merge.createdAt)})
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

export function Events({ rows }: { rows: CustomerDetail['recentEvents'] }) {
  return (
    <section aria-labelledby="events">
      <h2 id="events">Recent events</h2>
      {rows.length === 0 ? (
        <Empty>No recent events.</Empty>
      ) : (
        <table tabIndex={0}>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Event</th>
              <th scope="col">Level</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((event) => (
              <tr key={event.id}>
                <td>{dateMs(event.timestampMs)}</td>
                <td>{event.name}</td>
                <td>{event.level ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
