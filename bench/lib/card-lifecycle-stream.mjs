// Signed card-payments notifications of whole subscription lifecycles, for
// bench/card-lifecycle.mjs: a project's card rail set up (its notification secret through
// RAIL_SECRETS_FILE, grace days, the catalogue), a pool of subscriptions started through the
// rail, and two streams over a pool, each step the notifications the processor sends for it,
// in order, for one subscription:
//   renewal        customer.subscription.updated (the next period) + invoice.paid (its charge)
//   billing issue  invoice.payment_failed + customer.subscription.updated (past_due, the unpaid period)
//   recovery       invoice.paid + customer.subscription.updated (active again)
//   refund         charge.refunded (a partial refund of the last charge)
//   pause          customer.subscription.updated with pause_collection
//   resume         customer.subscription.updated without it
// The renewal stream renews every subscription in turn; the mixed stream picks each step from
// the subscription's state (a paused one resumes, a past-due one recovers, an active one renews,
// fails a payment, is refunded or pauses).
import { createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { call } from './common.mjs';

const SECRET = `whsec_bench_${randomBytes(12).toString('hex')}`;
const DAY = 86_400;
/** A period a renewal moves by: a day, so that a long run's periods stay within the rail's bounds. */
const PERIOD = DAY;
const PRODUCTS = ['prod_pro', 'prod_team'];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const nowS = () => Math.floor(Date.now() / 1000);
let serial = 0;
const uid = (prefix) => `${prefix}_${process.pid.toString(36)}${(++serial).toString(36)}${randomBytes(3).toString('hex')}`;

/** Writes the secrets file (RAIL_SECRETS_FILE) for `projectId`, sets the rail up and waits until a notification verifies. */
export async function setUpCardRail(base, token, secretsPath, projectId) {
  fs.writeFileSync(secretsPath, JSON.stringify({ projects: { [projectId]: { card_payments: { webhookSecrets: [SECRET] } } } }));
  await call(base, 'PUT', `/admin/v1/projects/${projectId}/rails/card_payments`, token, { accountId: `acct_${projectId}`, gracePeriodDays: 3 });
  await call(base, 'PUT', `/admin/v1/projects/${projectId}/products`, token, {
    products: [
      { rail: 'card_payments', productId: 'prod_pro', entitlementKeys: ['pro', 'cloud_sync'] },
      { rail: 'card_payments', productId: 'prod_team', entitlementKeys: ['pro', 'team'] },
    ],
  });
  // The file is re-read every few seconds: wait until a notification verifies.
  for (let i = 0; i < 200; i++) {
    const res = await send({ base, projectId }, 'invoice.paid', { id: uid('in'), object: 'invoice' }, nowS());
    if (res.status === 200) return;
    await sleep(100);
  }
  throw new Error('card notifications never verified (RAIL_SECRETS_FILE not re-read?)');
}

/**
 * One signed notification to `target` ({ base, projectId, capture? }): its status, decision and
 * the request id `capture` (then sent as x-bench-capture, for bench/capture-sql.mjs).
 */
export async function send(target, type, object, created, extra = {}) {
  const t = nowS();
  const payload = JSON.stringify({
    id: uid('evt'),
    object: 'event',
    api_version: '2025-03-31.basil',
    created,
    livemode: false,
    type,
    data: { object, ...extra },
  });
  const signature = createHmac('sha256', SECRET).update(`${t}.${payload}`).digest('hex');
  const headers = { 'Content-Type': 'application/json', 'Stripe-Signature': `t=${t},v1=${signature}` };
  const capture = target.capture ? uid('cap') : undefined;
  if (capture) headers['x-bench-capture'] = capture;
  // A connection the server closed as it was reused fails before any answer: sent again (the
  // same event id, so a notification that did arrive is answered as before, never applied twice).
  for (let attempt = 0; ; attempt++) {
    try {
      const res = await fetch(`${target.base}/v1/webhooks/card_payments/${target.projectId}`, { method: 'POST', headers, body: payload });
      const body = await res.json().catch(() => null);
      return { status: res.status, decision: body?.decision ?? null, type, capture };
    } catch (err) {
      if (attempt === 2) throw err;
    }
  }
}

/** The subscription object as the processor sends it (the period on the items). */
function subscriptionObject(sub, { status = sub.status, pausedUntil = null } = {}) {
  return {
    id: sub.id,
    object: 'subscription',
    customer: sub.customer,
    status,
    livemode: false,
    start_date: sub.startedAt,
    created: sub.startedAt,
    trial_end: null,
    cancel_at_period_end: false,
    pause_collection: pausedUntil === null ? null : { behavior: 'void', resumes_at: pausedUntil },
    metadata: {},
    items: {
      object: 'list',
      data: [
        {
          id: sub.itemId,
          object: 'subscription_item',
          current_period_start: sub.start,
          current_period_end: sub.end,
          quantity: 1,
          price: { id: sub.priceId, product: sub.product, unit_amount: 999, currency: 'usd', recurring: { interval: 'month', interval_count: 1 } },
        },
      ],
    },
  };
}

function invoiceObject(sub, { paid = 0, charge = null, periodStart }) {
  return {
    id: uid('in'),
    object: 'invoice',
    customer: sub.customer,
    subscription: sub.id,
    amount_paid: paid,
    currency: 'usd',
    charge,
    payment_intent: null,
    status_transitions: { paid_at: paid ? nowS() : null },
    lines: { data: [{ period: { start: periodStart } }] },
  };
}

/** The subscription's next event time: after its last one, never before now (each event is newer than the record). */
const tick = (sub) => (sub.created = Math.max(sub.created + 1, nowS()));

/** The steps: each sends its notifications in order through `out` and moves the subscription's state. */
const STEPS = {
  async renewal(sub, out) {
    sub.start = sub.end;
    sub.end = sub.start + PERIOD;
    await out('customer.subscription.updated', subscriptionObject(sub), tick(sub));
    await pay(sub, out);
  },
  async billingIssue(sub, out) {
    await out('invoice.payment_failed', invoiceObject(sub, { periodStart: sub.end }), tick(sub));
    sub.start = sub.end;
    sub.end = sub.start + PERIOD;
    sub.status = 'past_due';
    await out('customer.subscription.updated', subscriptionObject(sub), tick(sub));
  },
  async recovery(sub, out) {
    await pay(sub, out);
    sub.status = 'active';
    await out('customer.subscription.updated', subscriptionObject(sub), tick(sub));
  },
  async refund(sub, out) {
    const before = sub.refunded;
    sub.refunded += 100;
    const charge = { id: sub.charge, object: 'charge', customer: sub.customer, amount_refunded: sub.refunded, currency: 'usd', payment_intent: null };
    await out('charge.refunded', charge, tick(sub), { previous_attributes: { amount_refunded: before } });
  },
  async pause(sub, out) {
    sub.status = 'paused';
    await out('customer.subscription.updated', subscriptionObject(sub, { status: 'active', pausedUntil: sub.end + 30 * DAY }), tick(sub));
  },
  async resume(sub, out) {
    sub.status = 'active';
    await out('customer.subscription.updated', subscriptionObject(sub), tick(sub));
  },
};

async function pay(sub, out) {
  sub.charge = uid('ch');
  sub.refunded = 0;
  await out('invoice.paid', invoiceObject(sub, { paid: 999, charge: sub.charge, periodStart: sub.start }), tick(sub));
}

/** The mixed stream's next step for a subscription in its state. */
function mixedStep(sub, n) {
  if (sub.status === 'paused') return 'resume';
  if (sub.status === 'past_due') return 'recovery';
  // Deterministic per subscription and turn: 40 % renewals, 20 % billing issues, 20 % refunds, 20 % pauses.
  const pick = (n * 7 + sub.index * 3) % 10;
  if (pick < 4) return 'renewal';
  if (pick < 6) return 'billingIssue';
  if (pick < 8) return sub.refunded + 100 <= 999 ? 'refund' : 'renewal';
  return 'pause';
}

export const STREAMS = {
  renewal: () => 'renewal',
  mixed: mixedStep,
};

/**
 * `count` subscriptions started through the rail (created + first invoice paid), 8 at a time.
 * A notification answered otherwise than applied is sent again (at most twice, as the
 * processor retries); `retried` counts those answers by status.
 */
export async function startSubscriptions(target, count, label, retried = new Map()) {
  const subs = [];
  for (let i = 0; i < count; i++) {
    const start = nowS();
    subs.push({
      index: i,
      id: uid(`sub_${label}`),
      customer: uid(`cus_${label}`),
      itemId: uid('si'),
      priceId: uid('price'),
      product: PRODUCTS[i % PRODUCTS.length],
      startedAt: start,
      start,
      end: start + PERIOD,
      status: 'active',
      created: start,
      charge: null,
      refunded: 0,
      turn: 0,
    });
  }
  const applied = async (type, object, at) => {
    for (let attempt = 0; ; attempt++) {
      const res = await send(target, type, object, at);
      if (res.decision === 'applied') return;
      retried.set(res.status, (retried.get(res.status) ?? 0) + 1);
      if (attempt === 2) throw new Error(`${type}: ${res.status} ${res.decision}`);
    }
  };
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < subs.length) {
        const sub = subs[next++];
        await applied('customer.subscription.created', subscriptionObject(sub), tick(sub));
        await pay(sub, applied);
      }
    }),
  );
  return subs;
}

/** Counts of one run: notifications answered, by type and decision, and failures. */
export function tally() {
  return { notifications: 0, applied: 0, failed: 0, byType: new Map(), captures: [] };
}

function count(result, res, keep) {
  if (!keep) return;
  if (res.status !== 200) {
    result.failed++;
    return;
  }
  result.notifications++;
  if (res.decision === 'applied') result.applied++;
  const key = `${res.type} ${res.decision}`;
  result.byType.set(key, (result.byType.get(key) ?? 0) + 1);
  if (res.capture) result.captures.push(res);
}

/**
 * `stream` over `subs` on `connections` closed loops (each its own share of the subscriptions,
 * so one subscription's notifications stay in order) until `until()` is true; a step under way
 * then is finished, its later notifications not counted.
 */
export async function runStream(target, subs, stream, connections, until) {
  const result = tally();
  await Promise.all(
    Array.from({ length: connections }, async (_, w) => {
      const mine = subs.filter((sub) => sub.index % connections === w);
      for (let i = 0; !until() && mine.length > 0; i++) {
        const sub = mine[i % mine.length];
        const step = STREAMS[stream](sub, sub.turn++);
        await STEPS[step](sub, async (type, object, created, extra) => {
          const keep = !until();
          count(result, await send(target, type, object, created, extra).catch(() => ({ status: 0 })), keep);
        });
      }
    }),
  );
  return result;
}

/** `steps` steps of `stream`, one notification at a time (the statement count's pass). */
export async function runSteps(target, subs, stream, steps) {
  const result = tally();
  for (let i = 0; i < steps; i++) {
    const sub = subs[i % subs.length];
    const step = STREAMS[stream](sub, sub.turn++);
    await STEPS[step](sub, async (type, object, created, extra) => count(result, await send(target, type, object, created, extra), true));
  }
  return result;
}
