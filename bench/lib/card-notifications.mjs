// Signed card-payments notifications for the webhooks bench: a project with the card rail, its
// catalogue and its notification secret (through RAIL_SECRETS_FILE), and a closed loop of
// `customer.subscription.created` notifications, each a new subscription of a new card
// customer (a rail-only customer, its entitlements and, when endpoints are registered, its
// `customer.entitlements.updated` and `subscription.started` events).
import { createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { call } from './common.mjs';

const SECRET = `whsec_bench_${randomBytes(12).toString('hex')}`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let serial = 0;
const uid = (prefix) => `${prefix}_${process.pid.toString(36)}${(++serial).toString(36)}${randomBytes(3).toString('hex')}`;

/** The file the API is started with (RAIL_SECRETS_FILE); `enable` adds a project to it. */
export function cardSecretsFile(path) {
  const projects = {};
  const write = () => fs.writeFileSync(path, JSON.stringify({ projects }));
  write();
  return {
    path,
    async enable(base, token, projectId) {
      projects[projectId] = { card_payments: { webhookSecrets: [SECRET] } };
      write();
      await call(base, 'PUT', `/admin/v1/projects/${projectId}/rails/card_payments`, token, { accountId: `acct_${projectId}` });
      await call(base, 'PUT', `/admin/v1/projects/${projectId}/products`, token, {
        products: [{ rail: 'card_payments', productId: 'prod_bench', entitlementKeys: ['pro', 'cloud_sync'] }],
      });
      // The file is re-read every second: wait until a notification verifies.
      for (let i = 0; i < 100; i++) {
        if ((await notify(base, projectId, 'invoice.paid', { id: uid('in'), object: 'invoice' })).status === 200) return;
        await sleep(100);
      }
      throw new Error('card notifications never verified (RAIL_SECRETS_FILE not re-read?)');
    },
    remove: () => fs.rmSync(path, { force: true }),
  };
}

async function notify(base, projectId, type, object) {
  const nowS = Math.floor(Date.now() / 1000);
  const payload = JSON.stringify({ id: uid('evt'), object: 'event', api_version: '2025-03-31.basil', created: nowS, livemode: false, type, data: { object } });
  const signature = createHmac('sha256', SECRET).update(`${nowS}.${payload}`).digest('hex');
  const res = await fetch(`${base}/v1/webhooks/card_payments/${projectId}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'Stripe-Signature': `t=${nowS},v1=${signature}` },
    body: payload,
  });
  const body = await res.json().catch(() => null);
  return { status: res.status, body };
}

const subscription = () => ({
  id: uid('sub'),
  object: 'subscription',
  customer: uid('cus'),
  status: 'active',
  cancel_at_period_end: false,
  metadata: {},
  items: {
    object: 'list',
    data: [
      {
        id: uid('si'),
        object: 'subscription_item',
        current_period_end: Math.floor(Date.now() / 1000) + 30 * 86400,
        price: { id: uid('price'), product: 'prod_bench' },
      },
    ],
  },
});

/**
 * Closed loop of new-subscription notifications on `connections` connections for `ms`: the
 * rate, and per customer the time its notification was sent (to measure notification → delivery).
 */
export async function closedLoopNotifications(base, projectId, ms, connections = 8) {
  const sentAt = new Map();
  let done = 0;
  let failed = 0;
  const until = Date.now() + ms;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < until) {
        const started = Date.now();
        const res = await notify(base, projectId, 'customer.subscription.created', subscription()).catch(() => null);
        if (res?.status === 200 && res.body?.serviceCustomerId) {
          sentAt.set(res.body.serviceCustomerId, started);
          done++;
        } else failed++;
      }
    }),
  );
  return { perSecond: done / (ms / 1000), done, failed, sentAt };
}
