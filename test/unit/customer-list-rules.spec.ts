import { BILLING_ISSUE_STATUSES } from '#rails';
import {
  billingIssueWords,
  csvCell,
  csvLine,
  decodeCursor,
  encodeCursor,
  likeLiteral,
  parseListFilter,
  statesOfFilter,
} from '../../libs/telemetry/src/console/customer-list-rules.js';

describe('customer list rules', () => {
  it('quotes CSV cells per RFC 4180 and defuses formula starts', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell(null)).toBe('');
    expect(csvCell(12)).toBe('12');
    expect(csvCell(-12)).toBe('-12');
    expect(csvCell(false)).toBe('false');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    for (const start of ['=', '+', '-', '@', '\t', '\r']) expect(csvCell(`${start}x`).replace(/^"/, '')).toMatch(/^'/);
    expect(csvCell('=SUM(A1,B1)')).toBe(`"'=SUM(A1,B1)"`);
    expect(csvLine(['a', null, 'b'])).toBe('a,,b\r\n');
  });

  it('round-trips the cursor and refuses anything else', () => {
    const cursor = { key: '1767225600000000', id: 'cdcust_abc' };
    expect(decodeCursor(encodeCursor(cursor))).toEqual(cursor);
    expect(decodeCursor(undefined)).toBeNull();
    for (const bad of ['x', Buffer.from('["1; DROP", "a"]').toString('base64url'), Buffer.from('{}').toString('base64url')]) {
      expect(() => decodeCursor(bad)).toThrow(/cursor/);
    }
  });

  it('escapes LIKE wildcards', () => {
    expect(likeLiteral('cdcust_a%b\\')).toBe('cdcust\\_a\\%b\\\\');
  });

  it('parses the filter with defaults and lower-cases the search', () => {
    expect(parseListFilter({ q: '  Jane@Example.COM ' })).toEqual({
      q: 'jane@example.com',
      state: null,
      rail: null,
      product: null,
      paying: null,
      sort: 'created',
      order: 'desc',
    });
    expect(parseListFilter({ state: 'billing_issue', paying: 'false', sort: 'mrr', order: 'asc', rail: 'ios_store', product: 'p' })).toMatchObject({
      state: 'billing_issue',
      paying: false,
      sort: 'mrr',
      order: 'asc',
      rail: 'ios_store',
      product: 'p',
    });
    expect(() => parseListFilter({ state: 'canceled' })).toThrow(/state/);
    expect(() => parseListFilter({ q: ['a', 'b'] })).toThrow(/q/);
  });

  it('filters by the lifecycle states, and by the earlier words billing_issue and churned', () => {
    for (const state of ['trialing', 'active', 'in_grace_period', 'in_billing_retry', 'on_hold', 'paused', 'expired', 'refunded'] as const) {
      expect(parseListFilter({ state }).state).toBe(state);
      expect(statesOfFilter(state)).toEqual([state]);
    }
    expect(statesOfFilter('billing_issue')).toEqual(['in_grace_period', 'in_billing_retry', 'on_hold']);
    expect(statesOfFilter('churned')).toEqual(['expired']);
  });

  it('splits the rails billing-issue words of records without a lifecycle state into grace, hold and retry', () => {
    expect(billingIssueWords(BILLING_ISSUE_STATUSES)).toEqual({
      grace: ['SUBSCRIPTION_IN_GRACE_PERIOD', 'SUBSCRIPTION_STATE_IN_GRACE_PERIOD'],
      hold: ['SUBSCRIPTION_ON_HOLD', 'SUBSCRIPTION_STATE_ON_HOLD'],
      retry: ['past_due', 'unpaid', 'DID_FAIL_TO_RENEW', 'GRACE_PERIOD_EXPIRED'],
    });
  });
});
