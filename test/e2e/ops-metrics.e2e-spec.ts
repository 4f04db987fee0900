// Metrics of the durable jobs and the store rails, scraped from the METRICS_PORT
// listener like Prometheus would: jobs_processed_total by type and outcome, the queue gauges the
// worker refreshes from the jobs table on its tick, rail_notifications_total by rail and decision.
import http from 'node:http';
import { Injectable, Module } from '@nestjs/common';
import Stripe from 'stripe';
import { type Job, JobQueue, JobWorker, Metrics, type MetricsServer, OnJob, startMetricsServer } from '#platform';
import { RailSecrets } from '#rails';
import { createProjectWithApp, type ProjectFixture } from '../support/fixtures.js';
import { RailSecretsFile } from '../support/rail-secrets-file.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';

const SUCCEEDS = 'test.metrics_succeeds';
const FAILS = 'test.metrics_fails';
const SECRET = 'whsec_metrics_0123456789abcdefghijkl';

@Injectable()
class MetricsProbeJobs {
  @OnJob({ type: SUCCEEDS })
  async succeeds(_job: Job): Promise<void> {}

  @OnJob({ type: FAILS, maxAttempts: 2, backoff: { baseMs: 1, maxMs: 1 } })
  async fails(job: Job): Promise<void> {
    throw new Error(`planned failure ${job.attempt}`);
  }
}

@Module({ providers: [MetricsProbeJobs] })
class MetricsProbeJobsModule {}

function scrape(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: '/metrics', agent: false }, (res) => {
        let body = '';
        res.on('data', (d) => (body += String(d)));
        res.on('end', () => resolve(body));
      })
      .on('error', reject);
  });
}

/** The value of one sample `name{labels} value` (labels in any order); 0 when absent. */
function sample(body: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of body.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) found[pair[1]] = pair[2];
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(match[3]);
  }
  return 0;
}

describe('metrics of jobs and rails (scraped from METRICS_PORT)', () => {
  let t: TestApp;
  let server: MetricsServer;
  let file: RailSecretsFile;
  let fx: ProjectFixture;

  beforeAll(async () => {
    file = new RailSecretsFile();
    t = await createTestApp({ RAIL_SECRETS_FILE: file.path, LOG_LEVEL: 'fatal' }, { extraModules: [MetricsProbeJobsModule] });
    server = await startMetricsServer(t.app.get(Metrics), 0, '127.0.0.1');
    fx = await createProjectWithApp(t);
    file.write({ projects: { [fx.projectId]: { card_payments: { webhookSecrets: [SECRET] } } } });
    t.app.get(RailSecrets).reloadIfChanged();
    expect((await t.http.put(`/admin/v1/projects/${fx.projectId}/rails/card_payments`).set(operatorAuth()).send({ accountId: 'acct_metrics' })).status).toBe(
      200,
    );
    const products = await t.http
      .put(`/admin/v1/projects/${fx.projectId}/products`)
      .set(operatorAuth())
      .send({ products: [{ rail: 'card_payments', productId: 'prod_metrics', entitlementKeys: ['pro'] }] });
    expect(products.status).toBe(200);
  });
  afterAll(async () => {
    await server?.close();
    await t?.close();
    file?.remove();
  });

  it('job queue depth and lag per type come from the jobs table; succeeded, failed and dead-lettered are counted', async () => {
    const queue = t.app.get(JobQueue);
    const worker = t.app.get(JobWorker);
    const nowMs = t.clock.nowMs();
    for (let i = 0; i < 3; i++) await queue.enqueue(SUCCEEDS, { i }, { runAtMs: nowMs - 30_000 });
    await queue.enqueue(FAILS, {});
    await worker.refreshMetrics();
    const before = await scrape(server.port);
    expect(sample(before, 'job_queue_depth', { type: SUCCEEDS })).toBe(3);
    expect(sample(before, 'job_queue_depth', { type: FAILS })).toBe(1);
    expect(sample(before, 'job_lag_seconds', { type: SUCCEEDS })).toBeGreaterThanOrEqual(30);
    expect(sample(before, 'job_dead_letters', { type: FAILS })).toBe(0);

    expect(await worker.runDue({ types: [SUCCEEDS] })).toBe(3);
    // Two attempts of the failing job (the back-off is 1 ms): the second one is its last.
    await worker.runDue({ types: [FAILS] });
    await new Promise((resolve) => setTimeout(resolve, 5));
    await worker.runDue({ types: [FAILS], ignoreSchedule: true });
    await worker.refreshMetrics();
    const after = await scrape(server.port);
    const delta = (name: string, labels: Record<string, string>) => sample(after, name, labels) - sample(before, name, labels);
    expect(delta('jobs_processed_total', { type: SUCCEEDS, outcome: 'succeeded' })).toBe(3);
    expect(delta('jobs_processed_total', { type: FAILS, outcome: 'failed' })).toBe(2);
    expect(delta('jobs_processed_total', { type: FAILS, outcome: 'dead_lettered' })).toBe(1);
    expect(sample(after, 'job_queue_depth', { type: SUCCEEDS })).toBe(0);
    expect(sample(after, 'job_lag_seconds', { type: SUCCEEDS })).toBe(0);
    expect(sample(after, 'job_queue_depth', { type: FAILS })).toBe(0);
    expect(sample(after, 'job_dead_letters', { type: FAILS })).toBe(1);

    // The operator retries the dead letter: the gauge follows on the next refresh.
    const dead = await t.http.get('/admin/v1/jobs?status=dead').set(operatorAuth());
    const [{ id }] = dead.body.data.filter((job: { type: string }) => job.type === FAILS);
    expect((await t.http.post(`/admin/v1/jobs/${id}/retry`).set(operatorAuth())).status).toBeLessThan(300);
    await worker.refreshMetrics();
    const retried = await scrape(server.port);
    expect(sample(retried, 'job_dead_letters', { type: FAILS })).toBe(0);
    expect(sample(retried, 'job_queue_depth', { type: FAILS })).toBe(1);
  });

  it('rail notifications are counted per rail and decision where the answer is produced (applied, no_op, duplicate)', async () => {
    const now = Math.floor(t.clock.nowMs() / 1000);
    const subscription = {
      id: `sub_metrics_${now}`,
      object: 'subscription',
      customer: `cus_metrics_${now}`,
      status: 'active',
      cancel_at_period_end: false,
      metadata: {},
      items: {
        object: 'list',
        data: [
          { id: `si_metrics_${now}`, object: 'subscription_item', current_period_end: now + 30 * 86400, price: { id: 'price_m', product: 'prod_metrics' } },
        ],
      },
    };
    const send = (id: string) => {
      const payload = JSON.stringify({
        id,
        object: 'event',
        api_version: '2025-03-31.basil',
        created: now,
        livemode: false,
        type: 'customer.subscription.updated',
        data: { object: subscription },
      });
      return t.http
        .post(`/v1/webhooks/card_payments/${fx.projectId}`)
        .set('Content-Type', 'application/json')
        .set('Stripe-Signature', Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET, timestamp: now }))
        .send(payload);
    };
    const before = await scrape(server.port);
    const first = await send(`evt_metrics_a_${now}`);
    expect(first.status).toBe(200);
    expect(first.body.decision).toBe('applied');
    expect((await send(`evt_metrics_a_${now}`)).body.duplicate).toBe(true);
    const again = await send(`evt_metrics_b_${now}`); // same state, another notification
    expect(again.body.decision).toBe('no_op');
    const after = await scrape(server.port);
    const delta = (decision: string) =>
      sample(after, 'rail_notifications_total', { rail: 'card_payments', decision }) -
      sample(before, 'rail_notifications_total', { rail: 'card_payments', decision });
    expect({ applied: delta('applied'), duplicate: delta('duplicate'), no_op: delta('no_op'), failed: delta('failed') }).toEqual({
      applied: 1,
      duplicate: 1,
      no_op: 1,
      failed: 0,
    });
  });
});
