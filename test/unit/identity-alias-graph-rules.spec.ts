import { type OwnerDecision, decideOwner, ownersDisagree } from '../../libs/identity/src/domain/alias-graph-rules.js';

/**
 * Who wins in the alias graph, for identify (developer user id, anonymous id), the rails (rail
 * id, named customer) and migration (developer user id, rail ids): one table.
 */
describe('alias-graph rules: who wins', () => {
  const A = 'cdcust_a';
  const B = 'cdcust_b';
  it.each<[string, string | null, string | null, boolean, OwnerDecision]>([
    ['neither id is held: a new customer', null, null, false, { kind: 'create' }],
    ['only the secondary is held: its customer', null, B, false, { kind: 'join', customerId: B }],
    ['only the primary is held: its customer', A, null, false, { kind: 'join', customerId: A }],
    ['only the primary is held by a rail-only customer: still its customer', A, null, true, { kind: 'join', customerId: A }],
    ['both held by one customer: that customer', A, A, false, { kind: 'join', customerId: A }],
    ['both held by one rail-only customer: that customer', A, A, true, { kind: 'join', customerId: A }],
    ['two customers, the primary rail-only: folded into the secondary', A, B, true, { kind: 'fold', customerId: B, foldedCustomerId: A }],
    ['two customers otherwise: the primary keeps it, a review is queued', A, B, false, { kind: 'review', customerId: A, otherCustomerId: B }],
  ])('%s', (_case, primary, secondary, primaryRailOnly, decision) => {
    expect(decideOwner(primary, secondary, primaryRailOnly)).toEqual(decision);
    // Whether the primary is rail-only is read only when the owners disagree; it changes nothing otherwise.
    if (!ownersDisagree(primary, secondary)) expect(decideOwner(primary, secondary)).toEqual(decision);
  });

  it('without the rail-only flag there is never a fold (identify, migration, Android account ids)', () => {
    expect(decideOwner(A, B)).toEqual({ kind: 'review', customerId: A, otherCustomerId: B });
  });

  it('the owners disagree only when two different customers hold the ids', () => {
    expect([ownersDisagree(null, null), ownersDisagree(A, null), ownersDisagree(null, B), ownersDisagree(A, A), ownersDisagree(A, B)]).toEqual([
      false,
      false,
      false,
      false,
      true,
    ]);
  });
});
