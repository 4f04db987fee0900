import Stripe from 'stripe';
import { RailSecrets } from '#rails';
import { CardWebhookService } from '../../libs/rails/src/card/card-webhook.service.js';
import { RailSettingsRepository } from '../../libs/rails/src/model/rail-settings.repository.js';
import { WebhookGate } from '../../libs/rails/src/webhooks/webhook-gate.service.js';
import { lifecycleCardSubscription } from '../support/card-events.js';
import { RailSecretsFile } from '../support/rail-secrets-file.js';
import { createMediumContext, unique, type MediumContext } from '../support/medium.js';
import { statementRecorder } from '../support/statement-recorder.js';
import { testScope } from '../support/scopes.js';

const SECRET = 'whsec_medium_card_statements_0123456789';
const DAY = 86_400;
const PERIOD = 30 * DAY;

/**
 * Statements one applied card notification issues over the whole application (revenue ledger
 * and outbound webhooks attached), counted as the webhook route runs it: the gate's settings
 * read, then the notification (BEGIN and COMMIT included). The lifecycle stream of the
 * card-lifecycle bench, type by type (docs/performance.md, "Other benches"): creation and first
 * payment, a renewal (`customer.subscription.updated` and `invoice.paid`), a failed payment and
 * `past_due`, a recovery, a partial refund, a pause and a resume. Each type keeps a ceiling, so
 * that the path cannot grow silently; the means are printed (JEST_STATEMENTS=1 prints each one's statements).
 */
describe('medium: statements of one applied card notification', () => {
  let m: MediumContext;
  let file: RailSecretsFile;
  let projectId: string;
  const recorder = statementRecorder();
  const statements = recorder.statements;
  const byType = new Map<string, number[]>();
  const shown = new Set<string>();

  beforeAll(async () => {
    file = new RailSecretsFile();
    m = await createMediumContext({ env: { RAIL_SECRETS_FILE: file.path } });
    projectId = await m.newProject();
    file.write({ projects: { [projectId]: { card_payments: { webhookSecrets: [SECRET] } } } });
    m.get(RailSecrets).reloadIfChanged();
    await m.get(RailSettingsRepository).put({ projectId }, 'card_payments', { gracePeriodDays: 3 }, new Date());
    await m.newCatalogue(testScope(projectId, 'sandbox'), [
      { rail: 'card_payments', productId: 'prod_pro', entitlementKeys: ['pro', 'cloud_sync'] },
      { rail: 'card_payments', productId: 'prod_basic', entitlementKeys: ['basic'] },
    ]);
    recorder.install();
  });
  afterAll(async () => {
    recorder.restore();
    await m?.close();
    file?.remove();
  });

  const now = () => m.clock.nowSeconds();

  /** One delivery as the webhook route runs it (the gate's settings read, then the notification), counted. */
  async function deliver(type: string, object: Record<string, unknown>, created: number, label?: string, extra: Record<string, unknown> = {}) {
    const payload = JSON.stringify({
      id: unique('evt'),
      object: 'event',
      api_version: '2025-03-31.basil',
      created,
      livemode: false,
      type,
      data: { object, ...extra },
    });
    const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET, timestamp: now() });
    const view = await recorder.during(async () => {
      const settings = await m.get(WebhookGate).requireRail<Record<string, unknown>>(projectId, 'card_payments');
      return m.get(CardWebhookService).receive(projectId, Buffer.from(payload), header, unique('req_medium'), settings);
    });
    // The recovery's own update finds the subscription active again already (its invoice restored it): no_op, not counted.
    expect({ type, decision: view.decision }).toEqual({ type, decision: label === 'recovered' ? view.decision : 'applied' });
    if (view.decision !== 'applied') return { view, count: statements.length };
    const key = `${type}${label ? ` (${label})` : ''}`;
    byType.set(key, [...(byType.get(key) ?? []), statements.length]);
    if (process.env.JEST_STATEMENTS === '1' && !shown.has(key)) {
      shown.add(key);
      process.stdout.write(`${key}: ${statements.length}\n${statements.map((s) => `  ${s.text.slice(0, 160)}`).join('\n')}\n`);
    }
    return { view, count: statements.length };
  }

  /** A subscription of the bench's stream: its state moves with each step. */
  function stream() {
    const start = now() - 400 * DAY;
    const s = { id: unique('sub'), customer: unique('cus'), start, end: start + PERIOD, status: 'active', at: start, charge: '', refunded: 0 };
    const object = (o: { status?: string; pauseResumesAt?: number } = {}) =>
      lifecycleCardSubscription(s, { status: o.status ?? s.status, start: s.start, end: s.end, pauseResumesAt: o.pauseResumesAt }, unique);
    const invoice = (paid: number, periodStart: number) => ({
      id: unique('in'),
      object: 'invoice',
      customer: s.customer,
      subscription: s.id,
      amount_paid: paid,
      currency: 'usd',
      charge: paid ? s.charge : null,
      payment_intent: null,
      status_transitions: { paid_at: paid ? s.at : null },
      lines: { data: [{ period: { start: periodStart } }] },
    });
    const tick = () => (s.at += 60);
    const pay = (label?: string) => {
      s.charge = unique('ch');
      s.refunded = 0;
      tick();
      return deliver('invoice.paid', invoice(999, s.start), s.at, label);
    };
    return {
      s,
      created: () => deliver('customer.subscription.created', object(), tick()),
      pay,
      async renewal() {
        s.start = s.end;
        s.end = s.start + PERIOD;
        tick();
        return [await deliver('customer.subscription.updated', object(), s.at, 'renewal'), await pay('renewal')];
      },
      async billingIssue() {
        tick();
        const failed = await deliver('invoice.payment_failed', invoice(0, s.end), s.at);
        s.start = s.end;
        s.end = s.start + PERIOD;
        s.status = 'past_due';
        tick();
        return [failed, await deliver('customer.subscription.updated', object(), s.at, 'past_due')];
      },
      async recovery() {
        const paid = await pay('recovery');
        s.status = 'active';
        tick();
        return [paid, await deliver('customer.subscription.updated', object(), s.at, 'recovered')];
      },
      refund() {
        const before = s.refunded;
        s.refunded += 100;
        const charge = { id: s.charge, object: 'charge', customer: s.customer, amount_refunded: s.refunded, currency: 'usd', payment_intent: null };
        tick();
        return deliver('charge.refunded', charge, s.at, undefined, { previous_attributes: { amount_refunded: before } });
      },
      pause() {
        s.status = 'paused';
        tick();
        return deliver('customer.subscription.updated', object({ status: 'active', pauseResumesAt: s.end + 30 * DAY }), s.at, 'pause');
      },
      resume() {
        s.status = 'active';
        tick();
        return deliver('customer.subscription.updated', object(), s.at, 'resume');
      },
    };
  }

  const mean = (key: string) => {
    const counts = byType.get(key) ?? [];
    return counts.reduce((a, b) => a + b, 0) / counts.length;
  };

  it('each applied notification of the lifecycle stream stays within its statements', async () => {
    // Two rounds over three subscriptions of one customer each: the second round finds every per-project cache warm.
    for (let round = 0; round < 2; round++) {
      const subs = [stream(), stream(), stream()];
      for (const sub of subs) {
        await sub.created();
        await sub.pay();
      }
      for (const sub of subs) {
        await sub.renewal();
        await sub.billingIssue();
        await sub.recovery();
        await sub.refund();
        await sub.pause();
        await sub.resume();
        await sub.renewal();
        await sub.refund();
      }
      if (round === 0) byType.clear();
    }
    const means = Object.fromEntries([...byType.keys()].sort().map((key) => [key, mean(key)]));
    // The stream's steps after a subscription's start (its creation and first payment aside).
    const steps = [...byType.entries()].filter(([key]) => key !== 'customer.subscription.created' && key !== 'invoice.paid').flatMap(([, counts]) => counts);
    const perApplied = steps.reduce((a, b) => a + b, 0) / steps.length;
    process.stdout.write(
      `statements per applied card notification (the gate's settings read, BEGIN and COMMIT included):\n${JSON.stringify(means, null, 2)}\nper applied notification of the stream's steps: ${perApplied.toFixed(1)}\n`,
    );
    // Each type's count now, plus one: the outbound webhooks' endpoint check (cached 100 ms) falls on some notifications and not others.
    const ceilings: Record<string, number> = {
      'customer.subscription.created': 23,
      'invoice.paid': 18,
      'invoice.paid (renewal)': 13,
      'invoice.paid (recovery)': 15,
      'customer.subscription.updated (renewal)': 15,
      'customer.subscription.updated (past_due)': 15,
      'customer.subscription.updated (pause)': 15,
      'customer.subscription.updated (resume)': 15,
      'invoice.payment_failed': 14,
      'charge.refunded': 15,
    };
    const over = Object.entries(means).filter(([key, value]) => value > (ceilings[key] ?? 0));
    expect(over).toEqual([]);
  });
});
