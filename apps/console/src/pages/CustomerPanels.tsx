// The customer page's panels: traits, entitlements, subscriptions, identities, recent events.
import type { CustomerDetail, CustomerEntitlement } from '../api/types';
import { DataTable } from '../components/DataTable';
import { Status } from '../components/ui';
import { date, dateMs } from '../format';

function EntitlementTable({ caption, rows }: { caption: string; rows: CustomerEntitlement[] }) {
  return (
    <DataTable
      rows={rows}
      rowKey={(row) => `${row.key}|${row.rail}|${row.subscriptionId}`}
      caption={caption}
      empty={`No ${caption.toLowerCase()} entitlements.`}
      columns={[
        { header: 'Key', cell: (row) => row.key },
        { header: 'State', cell: (row) => <Status value={row.state} /> },
        { header: 'Source', cell: (row) => `${row.source} (${row.rail})` },
        { header: 'Product', cell: (row) => row.productId },
        { header: 'Valid until', cell: (row) => (row.validUntil === null ? 'lifetime' : date(row.validUntil)) },
      ]}
    />
  );
}

/** Every trait identify stored, email and first name first. */
export function Traits({ traits }: { traits: CustomerDetail['traits'] }) {
  const entries: [string, string][] = [
    ['email', traits.email ?? '—'],
    ['firstName', traits.firstName ?? '—'],
    ...Object.entries(traits.other).map(([key, value]): [string, string] => [key, value === null ? 'null' : String(value)]),
  ];
  return (
    <section aria-labelledby="traits">
      <h2 id="traits">Traits</h2>
      <dl className="traits">
        {entries.map(([key, value]) => (
          <div key={key}>
            <dt>{key}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
    </section>
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
      <DataTable
        rows={rows}
        rowKey={(row) => `${row.rail}|${row.subscriptionId}`}
        caption="Rail subscriptions"
        captionHidden
        empty="No rail subscriptions."
        columns={[
          { header: 'Rail', cell: (row) => row.rail },
          { header: 'Subscription', cell: (row) => <code>{row.subscriptionId}</code> },
          { header: 'Product', cell: (row) => row.productId },
          {
            header: 'State',
            cell: (row) => (
              <>
                <Status value={row.state} />
                {row.railStatus && row.railStatus.toLowerCase() !== row.state && <small className="muted"> rail status {row.railStatus}</small>}
              </>
            ),
          },
          { header: 'Valid until', cell: (row) => date(row.validUntil) },
          { header: 'Updated', cell: (row) => date(row.updatedAt) },
        ]}
      />
    </section>
  );
}

export function Identities({ identities }: { identities: CustomerDetail['identities'] }) {
  return (
    <section aria-labelledby="identities">
      <h2 id="identities">Identities</h2>
      <DataTable
        rows={identities.aliases}
        rowKey={(alias) => `${alias.type}|${alias.value}`}
        caption="Identities"
        captionHidden
        empty="No identities."
        columns={[
          { header: 'Type', cell: (alias) => alias.type },
          { header: 'Id', cell: (alias) => <code>{alias.value}</code> },
          { header: 'Assurance', cell: (alias) => alias.assurance },
          { header: 'Linked', cell: (alias) => date(alias.createdAt) },
        ]}
      />
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
      <DataTable
        rows={rows}
        rowKey={(event) => event.id}
        caption="Recent events"
        captionHidden
        empty="No recent events."
        columns={[
          { header: 'When', cell: (event) => dateMs(event.timestampMs) },
          { header: 'Event', cell: (event) => event.name },
          { header: 'Level', cell: (event) => event.level ?? '—' },
        ]}
      />
    </section>
  );
}
