import type { Clock } from '#platform';
import type { CatalogRepository } from '../../libs/entitlements/src/catalog/catalog.repository.js';
import { EntitlementKeyRegistry } from '../../libs/entitlements/src/catalog/entitlement-key-registry.service.js';

/** A registry over a fake catalogue whose stored keys are `stored`: its insert answers the keys not stored yet. */
function registryOver(stored: Set<string>) {
  const asked: string[][] = [];
  const catalog = {
    registerKeys: async (projectId: string, keys: readonly string[]) => {
      asked.push([...keys]);
      const inserted = keys.filter((key) => !stored.has(`${projectId}/${key}`));
      for (const key of inserted) stored.add(`${projectId}/${key}`);
      return inserted;
    },
  } as unknown as CatalogRepository;
  const clock = { now: () => new Date(0) } as unknown as Clock;
  return { registry: new EntitlementKeyRegistry(clock, catalog), asked };
}

describe('entitlement key registry: keys found registered are not sent again', () => {
  it('asks the database until the key is found registered, then no more for that project', async () => {
    const stored = new Set(['p1/pro']);
    const { registry, asked } = registryOver(stored);
    expect(await registry.register('p1', ['pro'], 'grant')).toEqual([]);
    expect(await registry.register('p1', ['pro'], 'grant')).toEqual([]);
    expect(asked).toEqual([['pro']]);
    // Another project's key of the same name is its own.
    expect(await registry.register('p2', ['pro'], 'grant')).toEqual(['pro']);
    expect(asked).toEqual([['pro'], ['pro']]);
  });

  it('does not remember a key it inserted (its transaction may roll back): the next mention asks again', async () => {
    const stored = new Set<string>();
    const { registry, asked } = registryOver(stored);
    expect(await registry.register('p1', ['pro'], 'grant')).toEqual(['pro']);
    stored.clear(); // the inserting transaction rolled back
    expect(await registry.register('p1', ['pro'], 'grant')).toEqual(['pro']);
    expect(await registry.register('p1', ['pro'], 'grant')).toEqual([]);
    expect(await registry.register('p1', ['pro'], 'grant')).toEqual([]);
    expect(asked).toEqual([['pro'], ['pro'], ['pro']]);
  });

  it('sends only the keys not known, sorted and once each', async () => {
    const { registry, asked } = registryOver(new Set(['p1/b']));
    await registry.register('p1', ['b'], 'catalog');
    expect(await registry.register('p1', ['c', 'b', 'a', 'c'], 'catalog')).toEqual(['a', 'c']);
    expect(asked).toEqual([['b'], ['a', 'c']]);
    expect(await registry.register('p1', [], 'catalog')).toEqual([]);
    expect(asked).toHaveLength(2);
  });
});
