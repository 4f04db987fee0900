import { Metrics, TenantScopes } from '#platform';
import { RailReader } from '#rails';
import { operatorAuth } from '../support/test-app.js';
import { tablesContaining } from '../support/plaintext-scan.js';
import { CARD_API_KEY, railReadHarness } from '../support/harness/rails-read.js';

const DAY = 86_400;

describe('rails: bounds and faults of the reads of the rails', () => {
  const h = railReadHarness();
  const { now, card, cardCustomer, iosCustomer, androidCustomer, appleReports, refresh } = h;

  it("the project's read rate: a read over the card bucket is unavailable and never reaches the store", async () => {
    const { t } = h;
    const other = await h.railProject();
    const put = await t.http
      .put(`/admin/v1/projects/${other.projectId}/rate-limits`)
      .set(operatorAuth())
      .send({ rail_reads_card_payments: { sustained: 0.01, burst: 1 } });
    expect(put.status).toBe(200);
    expect(put.body.rail_reads_card_payments).toEqual({ sustained: 0.01, burst: 1 });
    const { customerId } = await cardCustomer({ projectId: other.projectId });
    const first = await refresh(customerId, other.keys.skTest, other);
    expect(first.body.refreshed).toEqual([expect.objectContaining({ decision: 'no_change' })]);
    const calls = card.calls.length;
    const second = await refresh(customerId, other.keys.skTest, other);
    expect(second.status).toBe(200);
    expect(second.body.refreshed).toEqual([expect.objectContaining({ rail: 'card_payments', decision: 'unavailable', auditEventId: null })]);
    expect(card.calls.length).toBe(calls);
    const reader = t.app.get(RailReader);
    const held = await reader.readRailId(TenantScopes.ofVerifiedRailPayload(other.projectId, 'sandbox'), 'card_payments', 'cus_any', 'expiry');
    expect(held).toEqual(expect.objectContaining({ found: 'unavailable', decision: 'unavailable', retryAfterMs: expect.any(Number) }));
    expect(held.retryAfterMs).toBeGreaterThan(1000);
    expect(card.calls.length).toBe(calls);
    // The default table: card 20/s, iOS and Android 10/s.
    const table = await t.http.put(`/admin/v1/projects/${h.fx.projectId}/rate-limits`).set(operatorAuth()).send({});
    expect(table.body).toEqual(
      expect.objectContaining({
        rail_reads_card_payments: { sustained: 20, burst: 20 },
        rail_reads_ios_store: { sustained: 10, burst: 10 },
        rail_reads_android_store: { sustained: 10, burst: 10 },
      }),
    );
  });

  it("a store's 429 backs off that project and rail only; other projects keep reading", async () => {
    const { t, apple } = h;
    const other = await h.railProject();
    const mine = await iosCustomer();
    appleReports(mine.tx, 1, { expiresDate: t.clock.nowMs() + DAY * 1000 });
    apple.faults.production = { status: 429, headers: { 'Retry-After': '120' } };
    const limited = await t.app
      .get(RailReader)
      .readRailId(TenantScopes.ofVerifiedRailPayload(h.fx.projectId, 'sandbox'), 'ios_store', mine.tx.originalTransactionId, 'expiry');
    expect(limited).toEqual(expect.objectContaining({ found: 'unavailable', decision: 'unavailable', retryAfterMs: 120_000 }));
    apple.faults.production = null;

    // This project's iOS reads pause (the store is not asked) …
    const calls = apple.calls.length;
    const paused = await refresh(mine.customerId);
    expect(paused.body.refreshed).toEqual([expect.objectContaining({ rail: 'ios_store', decision: 'unavailable' })]);
    expect(apple.calls.length).toBe(calls);
    // … while its other rails and other projects keep reading.
    const android = await androidCustomer();
    expect((await refresh(android.customerId)).body.refreshed).toEqual([expect.objectContaining({ rail: 'android_store', decision: 'no_change' })]);
    const theirs = await cardCustomer({ projectId: other.projectId });
    expect((await refresh(theirs.customerId, other.keys.skTest, other)).body.refreshed).toEqual([expect.objectContaining({ decision: 'no_change' })]);

    // After Retry-After (service clock) the project's iOS reads resume.
    t.clock.advance(121);
    const resumed = await refresh(mine.customerId);
    expect(resumed.body.refreshed).toEqual([expect.objectContaining({ rail: 'ios_store', decision: 'applied' })]);
  });

  it('a hanging store is cut at the read timeout: unavailable, the stored state governs', async () => {
    const { customerId } = await cardCustomer({ periodEnd: now() + DAY });
    card.fault = 'hang';
    try {
      const res = await refresh(customerId);
      expect(res.status).toBe(200);
      expect(res.body.refreshed).toEqual([expect.objectContaining({ rail: 'card_payments', decision: 'unavailable', auditEventId: null })]);
      expect(res.body.data).toEqual([expect.objectContaining({ key: 'pro', isActive: true })]);
    } finally {
      card.fault = null;
    }
    const ios = await iosCustomer();
    h.apple.faults.production = 'hang';
    try {
      const res = await refresh(ios.customerId);
      expect(res.body.refreshed).toEqual([expect.objectContaining({ rail: 'ios_store', decision: 'unavailable' })]);
    } finally {
      h.apple.faults.production = null;
    }
    const android = await androidCustomer();
    h.google.hangReads = true;
    try {
      const res = await refresh(android.customerId);
      expect(res.body.refreshed).toEqual([expect.objectContaining({ rail: 'android_store', decision: 'unavailable' })]);
      expect(res.body.data).toEqual([expect.objectContaining({ key: 'pro', isActive: true })]);
    } finally {
      h.google.hangReads = false;
    }
  });

  it('metrics count reads per rail and outcome', async () => {
    const text = await h.t.app.get(Metrics).registry.metrics();
    expect(text).toMatch(/rail_reads_total\{rail="card_payments",outcome="live"\} [1-9]/);
    expect(text).toMatch(/rail_reads_total\{rail="card_payments",outcome="unavailable"\} [1-9]/);
    expect(text).toMatch(/rail_reads_total\{rail="card_payments",outcome="throttled"\} [1-9]/);
    expect(text).toMatch(/rail_reads_total\{rail="ios_store",outcome="throttled"\} [1-9]/);
    expect(text).toMatch(/rail_reads_total\{rail="android_store",outcome="live"\} [1-9]/);
  });

  it('credentials are never logged nor stored', async () => {
    const secrets = [CARD_API_KEY, h.apple.secrets().privateKey.split('\n')[1], h.google.serviceAccount().private_key.split('\n')[5]];
    expect(h.logs.length).toBeGreaterThan(0);
    expect(h.logs.some((line) => /rail read/.test(String(line.msg)))).toBe(true);
    const text = h.logs.map((line) => JSON.stringify(line)).join('\n');
    for (const secret of secrets) expect(text).not.toContain(secret);
    for (const { table, hits } of await tablesContaining(h.t.dataSource, secrets)) expect({ table, hits }).toEqual({ table, hits: 0 });
  });
});
