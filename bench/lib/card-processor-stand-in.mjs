// The card processor's API as bench/rails-reconcile.mjs reads it, in a process of its own (forked
// with an IPC channel), so that answering the job's reads takes no time from the bench's load
// generator, whose latencies count from each request's due time. One subscription by id, or a
// customer's listing, answered after 50 ms with the subscription renewed for a month; every
// read recorded (subscription, project, wall and service time).
//
// IPC: it sends { type: 'listening', port } once; it takes { type: 'subscriptions', ids } (the
// seeded ids, the only ones it knows), { type: 'offset', offsetMs } (the service clock's offset
// from the wall, as the bench moved it), and answers { type: 'distinct' } and { type: 'reads' }
// with a message of the same type carrying `count` or `reads`.
import http from 'node:http';

const STORE_LATENCY_MS = 50;
const known = new Set();
const reads = [];
let offsetMs = 0;
const serviceNowMs = () => Date.now() + offsetMs;

function subscriptionOf(id) {
  const match = /^sub_b_(\d+)_(\d+)$/.exec(id);
  if (!match) return null;
  const renewedEnd = Math.floor(serviceNowMs() / 1000) + 30 * 86400;
  return {
    id,
    object: 'subscription',
    customer: `cus_b_${match[1]}_${match[2]}`,
    status: 'active',
    livemode: false,
    cancel_at_period_end: false,
    current_period_end: renewedEnd,
    metadata: {},
    items: {
      object: 'list',
      data: [{ id: `si_${id}`, object: 'subscription_item', current_period_end: renewedEnd, price: { id: 'price_pro', product: 'prod_pro' } }],
    },
  };
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://processor');
  setTimeout(() => {
    res.setHeader('content-type', 'application/json');
    const byId = /^\/v1\/subscriptions\/([^/]+)$/.exec(url.pathname);
    const customer = /^\/v1\/customers\/([^/]+)$/.exec(url.pathname);
    if (customer) return res.end(JSON.stringify({ id: customer[1], object: 'customer' }));
    const listed = url.pathname === '/v1/subscriptions' ? url.searchParams.get('customer')?.replace(/^cus_/, 'sub_') : undefined;
    const id = byId ? byId[1] : listed;
    const sub = id ? subscriptionOf(id) : null;
    if (!sub || !known.has(id)) {
      return res.writeHead(404).end(JSON.stringify({ error: { type: 'invalid_request_error', code: 'resource_missing', message: 'No such object' } }));
    }
    reads.push({ id, project: Number(id.split('_')[2]), wallMs: Date.now(), serviceMs: serviceNowMs() });
    if (byId) return res.end(JSON.stringify(sub));
    return res.end(JSON.stringify({ object: 'list', data: [sub], has_more: false, url: '/v1/subscriptions' }));
  }, STORE_LATENCY_MS);
});

process.on('message', (message) => {
  if (message.type === 'subscriptions') for (const id of message.ids) known.add(id);
  else if (message.type === 'offset') offsetMs = message.offsetMs;
  else if (message.type === 'distinct') process.send({ type: 'distinct', count: new Set(reads.map((read) => read.id)).size });
  else if (message.type === 'reads') process.send({ type: 'reads', reads });
});
// The bench gone (its channel closed): nothing is left to answer.
process.on('disconnect', () => {
  server.closeAllConnections();
  server.close();
});
server.listen(0, '127.0.0.1', () => process.send({ type: 'listening', port: server.address().port }));
