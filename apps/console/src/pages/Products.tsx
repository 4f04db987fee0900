// The product catalogue (rail, product id, entitlement keys: replaced whole) and the entitlement keys.
import { useState } from 'react';
import { api, call } from '../api/client';
import { Alert, Empty, Field, FormAlert, Loaded, Select } from '../components/ui';
import { useLoad } from '../components/useLoad';
import { date } from '../format';

const RAILS = ['ios_store', 'android_store', 'card_payments'] as const;
type Rail = (typeof RAILS)[number];
interface Row {
  rail: Rail;
  productId: string;
  entitlementKeys: string;
}

export function Products({ projectId }: { projectId: string }) {
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
          {(list) =>
            list.data.length === 0 ? (
              <Empty>No entitlement keys yet: name one in the catalogue or grant one.</Empty>
            ) : (
              <table tabIndex={0}>
                <thead>
                  <tr>
                    <th scope="col">Key</th>
                    <th scope="col">Registered by</th>
                    <th scope="col">Since</th>
                  </tr>
                </thead>
                <tbody>
                  {list.data.map((key) => (
                    <tr key={key.key}>
                      <td>
                        <code>{key.key}</code>
                      </td>
                      <td>{key.registeredBy}</td>
                      <td>{date(key.createdAt)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )
          }
        </Loaded>
      </section>
    </>
  );
}

function Editor({ projectId, initial, onSaved }: { projectId: string; initial: Row[]; onSaved: () => void }) {
  const [rows, setRows] = useState<Row[]>(initial);
  const [error, setError] = useState<unknown>();
  const [saved, setSaved] = useState(false);
  const update = (index: number, patch: Partial<Row>) => setRows(rows.map((row, i) => (i === index ? { ...row, ...patch } : row)));
  const save = async () => {
    setSaved(false);
    setError(undefined);
    const products = rows.map((row) => ({
      rail: row.rail,
      productId: row.productId.trim(),
      entitlementKeys: row.entitlementKeys.split(/[\s,]+/).filter(Boolean),
    }));
    try {
      await call(api.PUT('/admin/v1/projects/{projectId}/products', { params: { path: { projectId } }, body: { products } }));
      setSaved(true);
      onSaved();
    } catch (failure) {
      setError(failure);
    }
  };
  return (
    <form
      aria-labelledby="catalogue"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        void save();
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
      <FormAlert error={error} fields={[]} />
      {saved && <Alert kind="info">Catalogue saved.</Alert>}
      <div className="actions">
        <button type="button" onClick={() => setRows([...rows, { rail: 'card_payments', productId: '', entitlementKeys: '' }])}>
          Add product
        </button>
        <button type="submit" className="primary">
          Save catalogue
        </button>
      </div>
    </form>
  );
}
