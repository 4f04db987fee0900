// A customer's states in human words, one badge per distinct state.
export const STATE_WORDS: Record<string, string> = {
  trialing: 'Trialing',
  active: 'Active',
  billing_issue: 'Billing issue',
  paused: 'Paused',
  churned: 'Churned',
  refunded: 'Refunded',
};

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
