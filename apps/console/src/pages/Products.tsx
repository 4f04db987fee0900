// The product catalogue (rail, product id, entitlement keys: replaced whole) and the entitlement keys.
import { useState } from 'react';
import { api, call } from '../api/client';
import { DataTable } from '../components/DataTable';
import { Empty, Field, Loaded, MutationStatus, Select } from '../components/ui';
import { useLoad } from '../components/useLoad';
import { useMutation } from '../components/useMutation';
import { date } from '../format';
import { usePageTitle } from '../components/page';

const RAILS = ['ios_store', 'android_store', 'card_payments'] as const;
type Rail = (typeof RAILS)[number];
interface Row {
  rail: Rail;
  productId: string;
  entitlementKeys: string;
}

export function Products({ projectId }: { projectId: string }) {
  usePageTitle('Products');
  const params = { params: { path: { projectId } } };
  const catalog = useLoad(() => call(api.GET('/admin/v1/projects/{projectId}/products', params)), [projectId]);
  const keys = useLoad(() => call(api.GET('/admin/v1/projects/{projectId}/entitlement-keys', params)), [projectId]);
  return (
    <>
      <h1>Products</h1>
      <Loaded load={catalog} label="the catalogue">
        {(data) => (
          <Editor
            projectId={projectId}
            initial={data.products.map((p) => ({ rail: p.rail as Rail, productId: p.productId, entitlementKeys: p.entitlementKeys.join(' ') }))}
            onSaved={keys.reload}
          />
        )}
      </Loaded>
      <section aria-labelledby="entitlement-keys">
        <h2 id="entitlement-keys">Entitlement keys</h2>
        <Loaded load={keys} label="entitlement keys">
          {(list) => (
            <DataTable
              rows={list.data}
              rowKey={(key) => key.key}
              caption="Entitlement keys"
              captionHidden
              empty="No entitlement keys yet: name one in the catalogue or grant one."
              columns={[
                { header: 'Key', cell: (key) => <code>{key.key}</code> },
                { header: 'Registered by', cell: (key) => key.registeredBy },
                { header: 'Since', cell: (key) => date(key.createdAt) },
              ]}
            />
          )}
        </Loaded>
      </section>
    </>
  );
}

function Editor({ projectId, initial, onSaved }: { projectId: string; initial: Row[]; onSaved: () => void }) {
  const [rows, setRows] = useState<Row[]>(initial);
  const update = (index: number, patch: Partial<Row>) => setRows(rows.map((row, i) => (i === index ? { ...row, ...patch } : row)));
  const save = useMutation(
    async () => {
      const products = rows.map((row) => ({
        rail: row.rail,
        productId: row.productId.trim(),
        entitlementKeys: row.entitlementKeys.split(/[\s,]+/).filter(Boolean),
      }));
      await call(api.PUT('/admin/v1/projects/{projectId}/products', { params: { path: { projectId } }, body: { products } }));
      return 'Catalogue saved.';
    },
    { reload: onSaved },
  );
  return (
    <form
      aria-labelledby="catalogue"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        void save.run();
      }}
    >
      <h2 id="catalogue">Catalogue</h2>
      {rows.length === 0 && <Empty>No products yet: add one.</Empty>}
      {rows.map((row, index) => (
        <fieldset key={index} className="row">
          <legend>Product {index + 1}</legend>
          <Select label="Rail" name={`rail-${index}`} value={row.rail} options={RAILS} onChange={(rail) => update(index, { rail: rail as Rail })} />
          <Field label="Product id" name={`productId-${index}`} value={row.productId} onChange={(productId) => update(index, { productId })} />
          <Field
            label="Entitlement keys"
            name={`entitlementKeys-${index}`}
            hint="Space-separated, snake_case"
            value={row.entitlementKeys}
            onChange={(entitlementKeys) => update(index, { entitlementKeys })}
          />
          <button type="button" onClick={() => setRows(rows.filter((_, i) => i !== index))}>
            Remove product {index + 1}
          </button>
        </fieldset>
      ))}
      <MutationStatus mutation={save} />
      <div className="actions">
        <button type="button" onClick={() => setRows([...rows, { rail: 'card_payments', productId: '', entitlementKeys: '' }])}>
          Add product
        </button>
        <button type="submit" className="primary" disabled={save.pending}>
          Save catalogue
        </button>
      </div>
    </form>
  );
}
