import type { PublicEntitlement } from './public-entitlement.js';

/**
 * The characters of every entitlement key the code-unit order below may sort (the catalogue's
 * and the grants' key alphabets). A key outside it leaves the order to the database.
 */
export const ORDERABLE_KEY = /^[A-Za-z0-9_.:-]+$/;

/**
 * Every one- and two-character string of ORDERABLE_KEY's alphabet: sorted by the database and
 * by code units, they come out the same exactly when the database's text order agrees with
 * JavaScript's on the characters keys and rails are made of.
 */
export function keyOrderProbe(): string[] {
  const alphabet = '-.0123456789:ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz';
  const out = [...alphabet];
  for (const a of alphabet) for (const b of alphabet) out.push(a + b);
  return out;
}

/** JavaScript's string order (UTF-16 code units). */
export const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The order of the active-entitlements read (`ORDER BY entitlement_key, rail`) where the database orders text by code units. */
export const byKeyThenRail = (a: PublicEntitlement, b: PublicEntitlement): number => byCodeUnits(a.key, b.key) || byCodeUnits(a.source.rail, b.source.rail);

const activeAt = (e: PublicEntitlement, nowMs: number): boolean => e.isActive && (e.validUntil === null || nowMs < e.validUntil * 1000);

/**
 * A customer's active entitlement rows after a change, from the rows active before it and the
 * rows the change wrote (each as its write returned it, in the order written): what reading
 * them again at `nowMs` would answer, in the read's order. A written row replaces the row of
 * its key and rail in place; a row no longer active at `nowMs` (ended by the write, or by
 * time) drops out. When a row of a new key and rail stays, the rows are sorted by code units,
 * which is the read's order only where `codeUnitOrder` (the database orders text so) and every
 * key is ORDERABLE_KEY; otherwise null: the caller reads the rows again.
 */
export function activeAfter(
  before: readonly PublicEntitlement[],
  written: readonly PublicEntitlement[],
  nowMs: number,
  codeUnitOrder: boolean,
): PublicEntitlement[] | null {
  const rows = [...before];
  const added = new Set<PublicEntitlement>();
  for (const row of written) {
    const at = rows.findIndex((r) => r.key === row.key && r.source.rail === row.source.rail);
    if (at < 0) {
      rows.push(row);
      added.add(row);
    } else {
      if (added.delete(rows[at])) added.add(row);
      rows[at] = row;
    }
  }
  const after = rows.filter((row) => activeAt(row, nowMs));
  if (!after.some((row) => added.has(row))) return after;
  if (!codeUnitOrder || !after.every((row) => ORDERABLE_KEY.test(row.key))) return null;
  return after.sort(byKeyThenRail);
}
