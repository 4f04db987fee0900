import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A programmed failure: an HTTP status with the processor's error body (and headers), or no answer at all. */
export type CardFault = { status: number; headers?: Record<string, string> } | 'hang';

/**
 * A stand-in for the card processor's REST API on 127.0.0.1, speaking its JSON: `GET
 * /v1/customers/:id` (404 `resource_missing` for an unknown customer), `GET
 * /v1/subscriptions?customer=&status=` (a list; without `status=all` canceled ones are left
 * out, as the processor does) and `GET /v1/subscriptions/:id`. Requests must carry
 * `Authorization: Bearer <apiKey>`. Answers are programmable (`customers`, `subscriptions`),
 * as are faults (`fault`: a status or a hang) and a delay.
 */
export class CardProcessorStandIn {
  /** Known customers (`cus_…`). */
  readonly customers = new Set<string>();
  /** Subscription objects by id (the processor's `subscription` JSON). */
  readonly subscriptions = new Map<string, Record<string, unknown>>();
  /** Every request, as `METHOD path?query`. */
  readonly calls: string[] = [];
  /** The Authorization headers seen. */
  readonly authorizations: string[] = [];
  fault: CardFault | null = null;
  delayMs = 0;
  private server: Server | undefined;
  private readonly hung = new Set<ServerResponse>();
  baseUrl = '';

  constructor(readonly apiKey: string) {}

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    for (const res of this.hung) res.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** A subscription object with one item of `productId` until `periodEnd` (Unix seconds). */
  subscription(id: string, customer: string, o: { status?: string; productId: string; periodEnd: number; cancelAtPeriodEnd?: boolean; livemode?: boolean }) {
    const sub: Record<string, unknown> = {
      id,
      object: 'subscription',
      customer,
      status: o.status ?? 'active',
      livemode: o.livemode ?? true,
      cancel_at_period_end: o.cancelAtPeriodEnd ?? false,
      metadata: {},
      items: {
        object: 'list',
        data: [
          {
            id: `si_${id}`,
            object: 'subscription_item',
            current_period_end: o.periodEnd,
            price: { id: `price_${o.productId}`, object: 'price', product: o.productId },
          },
        ],
        has_more: false,
      },
    };
    this.customers.add(customer);
    this.subscriptions.set(id, sub);
    return sub as Record<string, unknown> & { id: string; customer: string };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    for await (const _chunk of req) void _chunk;
    const url = new URL(req.url ?? '/', 'http://x');
    this.calls.push(`${req.method} ${url.pathname}${url.search}`);
    this.authorizations.push(req.headers.authorization ?? '');
    const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'Content-Type': 'application/json', 'Request-Id': `req_${this.calls.length}`, ...headers });
      res.end(JSON.stringify(value));
    };
    const missing = (what: string, id: string) =>
      json(404, { error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such ${what}: '${id}'`, param: 'id' } });
    if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    if (this.fault === 'hang') {
      this.hung.add(res);
      return;
    }
    if (this.fault) {
      const type = this.fault.status === 429 ? 'rate_limit_error' : this.fault.status >= 500 ? 'api_error' : 'invalid_request_error';
      return json(this.fault.status, { error: { type, message: `Programmed failure ${this.fault.status}` } }, this.fault.headers);
    }
    if (req.headers.authorization !== `Bearer ${this.apiKey}`) {
      return json(401, { error: { type: 'invalid_request_error', message: 'Invalid API Key provided' } });
    }
    let m: RegExpMatchArray | null;
    if (req.method === 'GET' && (m = url.pathname.match(/^\/v1\/customers\/([^/]+)$/))) {
      const id = decodeURIComponent(m[1]);
      return this.customers.has(id) ? json(200, { id, object: 'customer', livemode: true, metadata: {} }) : missing('customer', id);
    }
    if (req.method === 'GET' && url.pathname === '/v1/subscriptions') {
      const customer = url.searchParams.get('customer');
      const status = url.searchParams.get('status');
      const data = [...this.subscriptions.values()].filter(
        (sub) => sub.customer === customer && (status === 'all' || (status ? sub.status === status : sub.status !== 'canceled')),
      );
      return json(200, { object: 'list', url: '/v1/subscriptions', has_more: false, data });
    }
    if (req.method === 'GET' && (m = url.pathname.match(/^\/v1\/subscriptions\/([^/]+)$/))) {
      const id = decodeURIComponent(m[1]);
      const sub = this.subscriptions.get(id);
      return sub ? json(200, sub) : missing('subscription', id);
    }
    return json(404, { error: { type: 'invalid_request_error', message: 'Unrecognized request URL' } });
  }
}
