import { ApiError } from '#platform';
import { type GraphSnapshot, nodeKey, planMigration } from '../../libs/migration/src/domain/migration-plan.js';
import { isRowError, type MigrationRow, usersOf, validateRow } from '../../libs/migration/src/domain/migration-rows.js';

function row(input: Record<string, unknown>, index = 0): MigrationRow {
  const validated = validateRow(input, index);
  if (isRowError(validated)) throw new Error(`unexpected row error ${validated.reason}`);
  return validated;
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return (err as ApiError).code;
  }
  return undefined;
}

describe('migration request and row rules', () => {
  it('users: missing or empty is missing_required_param, not an array or over 1,000 is invalid_param_value', () => {
    expect(codeOf(() => usersOf({}))).toBe('missing_required_param');
    expect(codeOf(() => usersOf(undefined))).toBe('missing_required_param');
    expect(codeOf(() => usersOf({ users: [] }))).toBe('missing_required_param');
    expect(codeOf(() => usersOf({ users: 3 }))).toBe('invalid_param_value');
    expect(codeOf(() => usersOf({ users: new Array(1001).fill({}) }))).toBe('invalid_param_value');
    expect(usersOf({ users: new Array(1000).fill({}) })).toHaveLength(1000);
  });

  it('row reasons name the field; optional null or empty strings are absent', () => {
    const reason = (input: unknown) => {
      const out = validateRow(input, 3);
      return isRowError(out) ? out.reason : 'ok';
    };
    expect(reason({ developerUserId: '' })).toBe('developerUserId_required');
    expect(reason({ developerUserId: 'a'.repeat(256) })).toBe('ok');
    expect(reason({ developerUserId: 'a'.repeat(257) })).toBe('developerUserId_too_long');
    expect(reason({ developerUserId: 'u', androidPurchaseToken: false })).toBe('androidPurchaseToken_invalid_type');
    expect(reason({ developerUserId: 'u', androidPurchaseToken: 't'.repeat(513) })).toBe('androidPurchaseToken_too_long');
    expect(reason({ developerUserId: 'u', entitlements: [] })).toBe('entitlements_invalid_type');
    expect(reason({ developerUserId: 'u', entitlements: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, true])) })).toBe(
      'entitlements_too_many_keys',
    );
    expect(reason({ developerUserId: 'u', email: null, cardCustomerId: '' })).toBe('ok');
    expect(reason({ developerUserId: 'u', displayName: 'a\u0000b' })).toBe('displayName_invalid_value');
    const ok = row({ developerUserId: 'u', iosAppAccountToken: '6F1C1B8E-2A4B-4C1E-9A8E-3B2F1D0C9E7A', entitlements: { a: true, b: false } });
    expect(ok.railIds).toEqual([
      { field: 'iosAppAccountToken', rail: 'ios_store', type: 'ios_app_account_token', value: '6f1c1b8e-2a4b-4c1e-9a8e-3b2f1d0c9e7a', purchase: false },
    ]);
    expect(ok.entitlementKeys).toEqual(['a']);
  });
});

describe('migration plan (rows in order over a snapshot of the alias graph)', () => {
  let n = 0;
  const newId = () => `cdcust_new${++n}`;
  const empty = (): GraphSnapshot => ({ owners: new Map(), developerIds: new Map() });

  it('created, matched (rail-only customer), existing; later rows see earlier links', () => {
    const snapshot = empty();
    snapshot.owners.set(nodeKey('card_customer_id', 'cus_1'), { customerId: 'cdcust_rail', forgotten: false });
    snapshot.owners.set(nodeKey('developer', 'known'), { customerId: 'cdcust_known', forgotten: false });
    snapshot.developerIds.set('cdcust_known', new Set(['known']));
    const plan = planMigration(
      [
        row({ developerUserId: 'a', cardCustomerId: 'cus_1' }, 0),
        row({ developerUserId: 'b', androidPurchaseToken: 'tok' }, 1),
        row({ developerUserId: 'known' }, 2),
        row({ developerUserId: 'c', androidPurchaseToken: 'tok' }, 3),
      ],
      snapshot,
      newId,
    );
    expect(plan.rows.map((p) => [p.outcome, p.customerId])).toEqual([
      ['matched', 'cdcust_rail'],
      ['created', plan.newCustomers[0].customerId],
      ['existing', 'cdcust_known'],
      ['conflict', null],
    ]);
    expect(plan.rows[3].conflict).toMatchObject({
      reason: 'rail_ids_belong_to_another_user',
      railResolutions: { android_store: plan.newCustomers[0].customerId },
    });
    expect(plan.links).toEqual([
      { type: 'developer', value: 'a', customerId: 'cdcust_rail' },
      { type: 'developer', value: 'b', customerId: plan.newCustomers[0].customerId },
      { type: 'android_purchase_token', value: 'tok', customerId: plan.newCustomers[0].customerId },
    ]);
  });

  it('conflicts write nothing: different customers, a developer id on another customer', () => {
    const snapshot = empty();
    snapshot.owners.set(nodeKey('card_customer_id', 'cus_1'), { customerId: 'cdcust_1', forgotten: false });
    snapshot.owners.set(nodeKey('ios_original_transaction_id', 'otx'), { customerId: 'cdcust_2', forgotten: false });
    snapshot.owners.set(nodeKey('android_purchase_token', 'gone'), { customerId: 'cdcust_gone', forgotten: true });
    snapshot.owners.set(nodeKey('developer', 'dev'), { customerId: 'cdcust_dev', forgotten: false });
    const plan = planMigration(
      [row({ developerUserId: 'x', cardCustomerId: 'cus_1', iosStoreOriginalTransactionId: 'otx' }), row({ developerUserId: 'dev', cardCustomerId: 'cus_1' })],
      snapshot,
      newId,
    );
    expect(plan.rows.map((p) => p.conflict?.reason)).toEqual(['rail_ids_resolve_to_different_customers', 'rail_ids_belong_to_another_customer']);
    expect(plan.rows[0].conflict?.railResolutions).toEqual({ card_payments: 'cdcust_1', ios_store: 'cdcust_2' });
    expect(plan.rows[1].conflict?.developerCustomerId).toBe('cdcust_dev');
    expect(plan.links).toEqual([]);
    expect(plan.newCustomers).toEqual([]);
  });

  it('nodes of a forgotten customer are unknown: a new customer takes them', () => {
    const snapshot = empty();
    snapshot.owners.set(nodeKey('developer', 'again'), { customerId: 'cdcust_old', forgotten: true });
    snapshot.owners.set(nodeKey('android_purchase_token', 'gone'), { customerId: 'cdcust_old', forgotten: true });
    const plan = planMigration([row({ developerUserId: 'again', androidPurchaseToken: 'gone' })], snapshot, newId);
    expect(plan.rows[0].outcome).toBe('created');
    const id = plan.newCustomers[0].customerId;
    expect(plan.links).toEqual([
      { type: 'developer', value: 'again', customerId: id },
      { type: 'android_purchase_token', value: 'gone', customerId: id },
    ]);
  });
});
