// A customer's states in human words, one badge per distinct state: the lifecycle states of its
// subscriptions (expired only when every subscription ended: a churned customer).
export const STATE_WORDS: Record<string, string> = {
  trialing: 'Trialing',
  active: 'Active',
  in_grace_period: 'Billing issue: grace period',
  in_billing_retry: 'Billing issue: retrying',
  on_hold: 'Billing issue: on hold',
  paused: 'Paused',
  expired: 'Churned',
  refunded: 'Refunded',
};

// The list's state filter: each state, and any billing issue at once.
export const STATE_FILTERS: [string, string][] = [
  ['trialing', STATE_WORDS.trialing],
  ['active', STATE_WORDS.active],
  ['billing_issue', 'Billing issue (any)'],
  ['in_grace_period', STATE_WORDS.in_grace_period],
  ['in_billing_retry', STATE_WORDS.in_billing_retry],
  ['on_hold', STATE_WORDS.on_hold],
  ['paused', STATE_WORDS.paused],
  ['expired', STATE_WORDS.expired],
  ['refunded', STATE_WORDS.refunded],
];

export function StateBadges({ states }: { states: readonly string[] }) {
  const distinct = [...new Set(states)];
  if (distinct.length === 0) return <span className="muted">—</span>;
  return (
    <span className="badges">
      {distinct.map((state) => (
        <span key={state} className={`badge badge-${state.replace(/[^a-z_]/g, '')}`}>
          {STATE_WORDS[state] ?? state.replace(/_/g, ' ')}
        </span>
      ))}
    </span>
  );
}
