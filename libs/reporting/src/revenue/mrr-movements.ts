/**
 * How one customer's change moves MRR. Pure: given the customer's monthly amounts before and
 * after (per rail, product and currency), the movement of each key: `new` (the customer had
 * no MRR in the currency and never had any), `reactivation` (none now, some before), `expansion` and
 * `contraction` (a paying customer's amount up or down), `churned` (the customer's last MRR in
 * the currency goes). A customer's class is decided on its total in the currency; each key
 * (every rail and product, each rail, each rail and product) takes its own delta with that
 * class, so for every key end = start + new + expansion + reactivation − contraction − churned.
 */

export type MovementKind = 'new' | 'expansion' | 'contraction' | 'churned' | 'reactivation';

/** `all` rail and `*` product: over every rail, over every product. */
export const ALL_RAILS = 'all';
export const ALL_PRODUCTS = '*';

export interface MrrKeyAmount {
  rail: string;
  productId: string;
  currency: string;
  monthlyMinor: number;
}

export interface MrrMovement {
  rail: string;
  productId: string;
  currency: string;
  newMinor: number;
  expansionMinor: number;
  contractionMinor: number;
  churnedMinor: number;
  reactivationMinor: number;
}

const EPSILON = 1e-9;

/** The class of a customer's change of total MRR in one currency; null when it does not move. */
export function classifyMovement(beforeMinor: number, afterMinor: number, paidBefore: boolean): { up: MovementKind; down: MovementKind } | null {
  if (Math.abs(afterMinor - beforeMinor) <= EPSILON && beforeMinor > EPSILON === afterMinor > EPSILON) return null;
  if (beforeMinor <= EPSILON) return { up: paidBefore ? 'reactivation' : 'new', down: 'contraction' };
  if (afterMinor <= EPSILON) return { up: 'expansion', down: 'churned' };
  return { up: 'expansion', down: 'contraction' };
}

/**
 * The movements of one customer's change, per currency and key: each currency's total
 * (`all`/`*`), each rail (`rail`/`*`) and each rail and product. `paidBefore`: the customer
 * had MRR at some time before this change.
 */
export function mrrMovements(before: readonly MrrKeyAmount[], after: readonly MrrKeyAmount[], paidBefore: boolean): MrrMovement[] {
  const movements: MrrMovement[] = [];
  const currencies = new Set([...before, ...after].map((r) => r.currency));
  for (const currency of [...currencies].sort()) {
    const sum = (rows: readonly MrrKeyAmount[], match: (r: MrrKeyAmount) => boolean) =>
      rows.filter((r) => r.currency === currency && match(r)).reduce((s, r) => s + r.monthlyMinor, 0);
    const total = (rows: readonly MrrKeyAmount[]) => sum(rows, () => true);
    const kind = classifyMovement(total(before), total(after), paidBefore);
    if (!kind) continue;
    const keys = new Map<string, { rail: string; productId: string }>([[`${ALL_RAILS}|${ALL_PRODUCTS}`, { rail: ALL_RAILS, productId: ALL_PRODUCTS }]]);
    for (const r of [...before, ...after].filter((row) => row.currency === currency)) {
      keys.set(`${r.rail}|${ALL_PRODUCTS}`, { rail: r.rail, productId: ALL_PRODUCTS });
      keys.set(`${r.rail}|${r.productId}`, { rail: r.rail, productId: r.productId });
    }
    for (const { rail, productId } of keys.values()) {
      const match = (r: MrrKeyAmount) => (rail === ALL_RAILS || r.rail === rail) && (productId === ALL_PRODUCTS || r.productId === productId);
      const delta = sum(after, match) - sum(before, match);
      if (Math.abs(delta) <= EPSILON) continue;
      const movement: MrrMovement = { rail, productId, currency, newMinor: 0, expansionMinor: 0, contractionMinor: 0, churnedMinor: 0, reactivationMinor: 0 };
      movement[`${delta > 0 ? kind.up : kind.down}Minor`] = Math.abs(delta);
      movements.push(movement);
    }
  }
  return movements;
}

/** The net change of a movement: new + expansion + reactivation − contraction − churned. */
export function netMovement(m: Pick<MrrMovement, 'newMinor' | 'expansionMinor' | 'contractionMinor' | 'churnedMinor' | 'reactivationMinor'>): number {
  return m.newMinor + m.expansionMinor + m.reactivationMinor - m.contractionMinor - m.churnedMinor;
}
