import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import {
  MAX_ATTEMPTS,
  checkEndpointUrl,
  deriveSecret,
  announcedSetText,
  causeSinceHeard,
  changedKeys,
  changedRows,
  diffEntitlements,
  parseAnnouncedSet,
  withoutChange,
  endpointWants,
  isPublicAddress,
  nextAttemptAtMs,
  serviceSignatureHeader,
  standardSignatureHeader,
} from '#webhooks';
import { railChangeCause, renewalEventTypes, subscriptionEventTypes, willRenew } from '../../libs/rails/src/model/subscription-events.js';

describe('webhooks: pure rules', () => {
  describe('secrets and signatures', () => {
    const key = Buffer.from('k'.repeat(32));

    it('derives whsec_ + 32 bytes of standard base64 from the key, the endpoint id and the version', () => {
      const secret = deriveSecret(key, 'we_1', 1);
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
      expect(deriveSecret(key, 'we_1', 1)).toBe(secret);
      expect(deriveSecret(key, 'we_1', 2)).not.toBe(secret);
      expect(deriveSecret(key, 'we_2', 1)).not.toBe(secret);
      expect(deriveSecret(Buffer.from('j'.repeat(32)), 'we_1', 1)).not.toBe(secret);
      expect(secret.slice(6)).toBe(createHmac('sha256', key).update('we_1:1').digest('base64'));
    });

    it('the service signature: t and one v1 per secret, newest first, hex HMAC of "{t}.{body}" keyed with the secret string', () => {
      const header = serviceSignatureHeader(['whsec_new', 'whsec_old'], 1_764_400_000, '{"a":1}');
      const hmac = (secret: string) => createHmac('sha256', secret).update('1764400000.{"a":1}').digest('hex');
      expect(header).toBe(`t=1764400000,v1=${hmac('whsec_new')},v1=${hmac('whsec_old')}`);
    });

    it('the Standard Webhooks signature verifies with the standardwebhooks package, for each secret', () => {
      const secrets = [deriveSecret(key, 'we_1', 2), deriveSecret(key, 'we_1', 1)];
      const t = Math.floor(Date.now() / 1000);
      const body = '{"id":"evt_1"}';
      const headers = { 'webhook-id': 'evt_1', 'webhook-timestamp': String(t), 'webhook-signature': standardSignatureHeader(secrets, 'evt_1', t, body) };
      for (const secret of secrets) expect(new Webhook(secret).verify(body, headers)).toEqual({ id: 'evt_1' });
      expect(() => new Webhook(deriveSecret(key, 'we_1', 3)).verify(body, headers)).toThrow();
    });
  });

  describe('retry schedule', () => {
    it('10 s, 1 min, 5 min, 30 min, 2 h, 6 h, 12 h, 24 h after the failures, then dead (9 attempts)', () => {
      const delays = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => nextAttemptAtMs(n, 0));
      expect(delays).toEqual([10, 60, 300, 1800, 7200, 21600, 43200, 86400].map((s) => s * 1000));
      expect(MAX_ATTEMPTS).toBe(9);
      expect(nextAttemptAtMs(9, 0)).toBeNull();
      expect(nextAttemptAtMs(10, 0)).toBeNull();
    });
  });

  describe('addresses and urls', () => {
    it.each([
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      'fd00::1',
      'fe80::1',
      '::ffff:127.0.0.1',
    ])('%s is not public', (address) => expect(isPublicAddress(address)).toBe(false));
    it.each(['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('%s is public', (address) => expect(isPublicAddress(address)).toBe(true));

    it('https only, no credentials, no private literal or localhost, unless private targets are allowed', () => {
      expect(checkEndpointUrl('https://hooks.example.com/x', false).ok).toBe(true);
      expect(checkEndpointUrl('http://hooks.example.com/x', false)).toEqual({ ok: false, reason: 'url must use https' });
      expect(checkEndpointUrl('https://127.0.0.1/x', false)).toEqual({ ok: false, reason: 'url must resolve to public addresses only' });
      expect(checkEndpointUrl('https://[::1]/x', false)).toEqual({ ok: false, reason: 'url must resolve to public addresses only' });
      expect(checkEndpointUrl('https://localhost/x', false)).toEqual({ ok: false, reason: 'url must resolve to public addresses only' });
      expect(checkEndpointUrl('https://u:p@hooks.example.com/x', false)).toEqual({ ok: false, reason: 'url must not carry credentials' });
      expect(checkEndpointUrl('not a url', false)).toEqual({ ok: false, reason: 'url must be an absolute URL' });
      expect(checkEndpointUrl('http://127.0.0.1:8080/x', true).ok).toBe(true);
      expect(checkEndpointUrl('ftp://127.0.0.1/x', true).ok).toBe(false);
    });
  });

  describe('event types and the entitlement diff', () => {
    it('"*" receives every type; otherwise the listed ones', () => {
      expect(endpointWants(['*'], 'test')).toBe(true);
      expect(endpointWants(['customer.erased'], 'customer.erased')).toBe(true);
      expect(endpointWants(['customer.erased'], 'test')).toBe(false);
    });

    it('activated, extended and deactivated keys, collapsed per key (the longest rail wins), sorted', () => {
      const before = [
        { key: 'b', validUntil: 100, rail: 'manual' },
        { key: 'c', validUntil: 100, rail: 'ios_store' },
        { key: 'd', validUntil: 100, rail: 'manual' },
        { key: 'd', validUntil: null, rail: 'card_payments' },
      ];
      const after = [
        { key: 'a', validUntil: null, rail: 'manual' },
        { key: 'b', validUntil: 200, rail: 'manual' },
        { key: 'd', validUntil: null, rail: 'card_payments' },
      ];
      expect(diffEntitlements(before, after, (_key, change) => (change === 'deactivated' ? 'refund' : 'grant'))).toEqual([
        { key: 'a', change: 'activated', cause: 'grant', rail: 'manual', validUntil: null },
        { key: 'b', change: 'extended', cause: 'grant', rail: 'manual', validUntil: 200 },
        { key: 'c', change: 'deactivated', cause: 'refund', rail: 'ios_store', validUntil: 100 },
      ]);
      expect(diffEntitlements(after, after, () => 'grant')).toEqual([]);
    });

    it('the rows a change wrote, and the state without that change', () => {
      // A manual grant of `pro` under a longer card row: the set is the same, one row changed.
      const before = [{ key: 'pro', validUntil: 900, rail: 'card_payments' }];
      const after = [...before, { key: 'pro', validUntil: 300, rail: 'manual' }];
      expect(diffEntitlements(before, after, () => 'grant')).toEqual([]);
      expect([...changedRows(before, after)]).toEqual(['pro\u0000manual']);
      expect(changedRows(after, after).size).toBe(0);
      // Meanwhile another change ended the card row: without the grant, `pro` is gone; with it, it stays until 300.
      const current = [{ key: 'pro', validUntil: 300, rail: 'manual' }];
      expect(withoutChange(current, before, after)).toEqual([]);
      expect(diffEntitlements(withoutChange(current, before, after), current, () => 'grant')).toEqual([
        { key: 'pro', change: 'activated', cause: 'grant', rail: 'manual', validUntil: 300 },
      ]);
      // A revoke puts its row back; rows the change did not write stay as they are now.
      const revoked = { before: [{ key: 'a', validUntil: 100, rail: 'manual' }], after: [] };
      const now = [{ key: 'b', validUntil: 50, rail: 'ios_store' }];
      expect(withoutChange(now, revoked.before, revoked.after)).toEqual([...now, ...revoked.before]);
      // A row the change moved is put back as it was.
      const moved = { before: [{ key: 'a', validUntil: 100, rail: 'manual' }], after: [{ key: 'a', validUntil: 200, rail: 'manual' }] };
      expect(withoutChange(moved.after, moved.before, moved.after)).toEqual(moved.before);
    });

    it('the announced set: one row per key in one text, and the causes since it', () => {
      const rows = [
        { key: 'pro', validUntil: 300, rail: 'manual' },
        { key: 'b', validUntil: null, rail: 'ios_store' },
        { key: 'pro', validUntil: 900, rail: 'card_payments' },
        { key: 'b', validUntil: null, rail: 'android_store' },
      ];
      // The longest row per key; between rows that end together, the rail that sorts first; keys sorted.
      const text = announcedSetText(rows);
      expect(text).toBe('[["b",null,"android_store"],["pro",900,"card_payments"]]');
      expect(announcedSetText([...rows].reverse())).toBe(text);
      expect(announcedSetText([])).toBe('[]');
      expect(parseAnnouncedSet(text)).toEqual([
        { key: 'b', validUntil: null, rail: 'android_store' },
        { key: 'pro', validUntil: 900, rail: 'card_payments' },
      ]);
      // Text that is not a set is unknown, never a failed change.
      for (const bad of ['{', '{}', '[["a",1]]', '[["a","1","manual"]]']) expect(parseAnnouncedSet(bad)).toBeNull();
      expect([...changedKeys([rows[0]], [rows[0], rows[1]])]).toEqual(['b']);

      // Receivers heard `trial` (ended at 100) and `pro`; a grant of `extra` at 150 writes only `extra`.
      const heard = [
        { key: 'trial', validUntil: 100, rail: 'manual' },
        { key: 'pro', validUntil: 900, rail: 'manual' },
        { key: 'gone', validUntil: 500, rail: 'card_payments' },
      ];
      const now = [
        { key: 'pro', validUntil: 900, rail: 'manual' },
        { key: 'extra', validUntil: 400, rail: 'manual' },
      ];
      const causeOf = causeSinceHeard(heard, new Set(['extra']), 150, () => 'grant');
      expect(diffEntitlements(heard, now, causeOf)).toEqual([
        { key: 'extra', change: 'activated', cause: 'grant', rail: 'manual', validUntil: 400 },
        // Not yet ended: another change nobody announced; the writer's cause.
        { key: 'gone', change: 'deactivated', cause: 'grant', rail: 'card_payments', validUntil: 500 },
        { key: 'trial', change: 'deactivated', cause: 'expiration', rail: 'manual', validUntil: 100 },
      ]);
      // A key the change wrote keeps the writer's cause, ended or not.
      expect(causeSinceHeard(heard, new Set(['trial']), 150, () => 'revoke')('trial', 'deactivated')).toBe('revoke');
    });

    it('subscription events and causes of a rail change', () => {
      const next = { state: 'active' as const, productId: 'p', validUntil: 200, rawStatus: null };
      expect(subscriptionEventTypes({ stored: null, next })).toEqual(['subscription.started']);
      expect(subscriptionEventTypes({ stored: { state: 'active', productId: 'p', validUntil: 100 }, next })).toEqual(['subscription.renewed']);
      expect(subscriptionEventTypes({ stored: { state: 'active', productId: 'q', validUntil: 200 }, next })).toEqual(['subscription.product_changed']);
      const ended = { ...next, state: 'inactive' as const };
      expect(subscriptionEventTypes({ stored: { state: 'active', productId: 'p', validUntil: 200 }, next: { ...ended, endedBy: 'revoked' } })).toEqual([
        'subscription.refunded',
      ]);
      expect(subscriptionEventTypes({ stored: { state: 'active', productId: 'p', validUntil: 200 }, next: ended })).toEqual(['subscription.expired']);
      expect(subscriptionEventTypes({ stored: { state: 'inactive', productId: 'p', validUntil: 200 }, next: ended })).toEqual([]);
      expect(railChangeCause('activated', next)).toBe('purchase');
      expect(railChangeCause('extended', next)).toBe('renewal');
      expect(railChangeCause('deactivated', { ...ended, endedBy: 'revoked' })).toBe('refund');
      expect(railChangeCause('deactivated', { ...ended, rawStatus: 'past_due' })).toBe('billing_issue');
      expect(railChangeCause('deactivated', ended)).toBe('expiration');
    });

    it("auto-renew turned off or on: subscription.canceled / subscription.uncanceled, from each rail's status word", () => {
      expect(willRenew('active', 'active (cancel_at_period_end)')).toBe(false);
      expect(willRenew('active', 'DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED')).toBe(false);
      expect(willRenew('active', 'SUBSCRIPTION_STATE_CANCELED')).toBe(false);
      expect(willRenew('active', 'DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_ENABLED')).toBe(true);
      expect(willRenew('active', 'SUBSCRIPTION_STATE_ACTIVE')).toBe(true);
      expect(willRenew('active', null)).toBe(true);
      expect(willRenew('inactive', 'EXPIRED')).toBe(false);
      const facts = (before: string | null, after: string | null) => ({
        stored: { state: 'active' as const, productId: 'p', validUntil: 200, rawStatus: before },
        next: { state: 'active' as const, productId: 'p', validUntil: 200, rawStatus: after },
      });
      for (const [on, off] of [
        ['active', 'active (cancel_at_period_end)'],
        ['DID_RENEW', 'DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED'],
        ['SUBSCRIPTION_STATE_ACTIVE', 'SUBSCRIPTION_STATE_CANCELED'],
      ]) {
        expect(renewalEventTypes(facts(on, off))).toEqual(['subscription.canceled']);
        expect(renewalEventTypes(facts(off, off))).toEqual([]);
        expect(subscriptionEventTypes(facts(on, off))).toEqual(['subscription.canceled']);
      }
      expect(renewalEventTypes(facts('DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED', 'DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_ENABLED'))).toEqual([
        'subscription.uncanceled',
      ]);
      expect(renewalEventTypes(facts('SUBSCRIPTION_STATE_CANCELED', 'SUBSCRIPTION_STATE_ACTIVE'))).toEqual(['subscription.uncanceled']);
      // An iOS purchase sync says nothing about renewal: no event either way; the store's later
      // AUTO_RENEW_ENABLED still means "turned on again".
      const disabled = 'DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED';
      const enabled = 'DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_ENABLED';
      expect(renewalEventTypes(facts(disabled, 'Auto-Renewable Subscription'))).toEqual([]);
      expect(renewalEventTypes(facts(disabled, 'DID_CHANGE_RENEWAL_PREF/UPGRADE'))).toEqual([]);
      expect(renewalEventTypes(facts('Auto-Renewable Subscription', enabled))).toEqual(['subscription.uncanceled']);
      expect(renewalEventTypes(facts('Auto-Renewable Subscription', disabled))).toEqual(['subscription.canceled']);
      expect(renewalEventTypes(facts('DID_RENEW', enabled))).toEqual([]);
      expect(renewalEventTypes(facts(enabled, enabled))).toEqual([]);
      expect(willRenew('active', 'Auto-Renewable Subscription')).toBe(true);
      // A renewal of a canceled subscription re-enabled: renewed and uncanceled.
      const renewed = {
        ...facts('active (cancel_at_period_end)', 'active'),
        next: { state: 'active' as const, productId: 'p', validUntil: 300, rawStatus: 'active' },
      };
      expect(subscriptionEventTypes(renewed)).toEqual(['subscription.renewed', 'subscription.uncanceled']);
      // Ending, or a stored record without its status word: no renewal event.
      expect(renewalEventTypes({ ...facts('active', 'x'), next: { state: 'inactive', productId: 'p', validUntil: 200, rawStatus: 'canceled' } })).toEqual([]);
      expect(renewalEventTypes({ stored: { state: 'active', productId: 'p', validUntil: 200 }, next: facts('a', 'canceled').next })).toEqual([]);
    });
  });
});
