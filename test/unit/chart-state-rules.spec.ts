import { chartStateMoves, chartStateOf } from '../../libs/reporting/src/revenue/chart-states.js';

describe('the state chart’s count of one subscription', () => {
  it('counts each lifecycle state once; active and grace only while paying; on hold, expired and refunded in none', () => {
    expect(chartStateOf('active', true)).toBe('active');
    expect(chartStateOf('active', false)).toBeNull();
    expect(chartStateOf('in_grace_period', true)).toBe('in_grace_period');
    expect(chartStateOf('in_grace_period', false)).toBeNull();
    for (const state of ['trialing', 'in_billing_retry', 'paused']) {
      expect(chartStateOf(state, false)).toBe(state);
      expect(chartStateOf(state, true)).toBe(state);
    }
    for (const state of ['on_hold', 'expired', 'refunded']) expect(chartStateOf(state, true)).toBeNull();
    // A record without a lifecycle state: active while paying.
    expect(chartStateOf(null, true)).toBe('active');
    expect(chartStateOf(null, false)).toBeNull();
  });

  it('moves from the state before to the state after; a trial starts, ends, and converts into active', () => {
    const p = (state: string, productId = 'pro') => ({ state, productId });
    expect(chartStateMoves(p('active'), p('active'))).toBeNull();
    expect(chartStateMoves(null, null)).toBeNull();
    expect(chartStateMoves(null, p('trialing'))).toEqual({
      left: null,
      entered: p('trialing'),
      trial: { started: 1, ended: 0, converted: 0, productId: 'pro' },
    });
    expect(chartStateMoves(p('trialing'), p('active'))).toEqual({
      left: p('trialing'),
      entered: p('active'),
      trial: { started: 0, ended: 1, converted: 1, productId: 'pro' },
    });
    expect(chartStateMoves(p('trialing'), null)?.trial).toEqual({ started: 0, ended: 1, converted: 0, productId: 'pro' });
    expect(chartStateMoves(p('trialing'), p('in_billing_retry'))?.trial).toEqual({ started: 0, ended: 1, converted: 0, productId: 'pro' });
    // A product change moves the count between products; a trial that changes product neither starts nor ends.
    expect(chartStateMoves(p('trialing', 'a'), p('trialing', 'b'))).toEqual({ left: p('trialing', 'a'), entered: p('trialing', 'b'), trial: null });
    expect(chartStateMoves(p('active'), p('in_grace_period'))).toEqual({ left: p('active'), entered: p('in_grace_period'), trial: null });
  });
});
