import { createVerify, generateKeyPairSync } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A purchase as the Publisher API returns it (SubscriptionPurchaseV2 or ProductPurchase JSON). */
export type PublisherPurchase = Record<string, unknown>;

export interface PublisherCall {
  method: string;
  path: string;
}

/**
 * A stand-in for Google's OAuth token endpoint and the Android Publisher API on 127.0.0.1:
 * verifies the service account's signed assertion (RS256, aud = token_uri, the
 * androidpublisher scope), issues access tokens, serves subscriptionsv2.get and products.get
 * from `subscriptions` / `products` and voidedpurchases.list (paged, `token` / `nextPageToken`)
 * from `voided`, records acknowledgements, and fails on demand.
 */
export class AndroidPublisherStandIn {
  readonly subscriptions = new Map<string, PublisherPurchase>();
  readonly products = new Map<string, PublisherPurchase>();
  readonly calls: PublisherCall[] = [];
  readonly acknowledged: string[] = [];
  /** Voided purchases per package (VoidedPurchase JSON), served by voidedpurchases.list within its time window. */
  readonly voided = new Map<string, PublisherPurchase[]>();
  /** Entries per page of voidedpurchases.list (the request's maxResults when smaller). */
  voidedPageSize = 2;
  /** The query of every voidedpurchases.list request, in order. */
  readonly voidedQueries: { packageName: string; query: Record<string, string> }[] = [];
  /** The `traceparent` header of every request, in order (absent: undefined). */
  readonly traceparents: (string | undefined)[] = [];
  tokensIssued = 0;
  /** While true, every Publisher API read answers 500. */
  failReads = false;
  /** While true, Publisher API reads never answer (the connection stays open until stop()). */
  hangReads = false;
  /** While true, the token endpoint answers 500. */
  failTokens = false;
  readonly keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  readonly clientEmail = 'rails-test@example-project.iam.gserviceaccount.com';
  private server: Server | undefined;
  private readonly issued = new Set<string>();
  baseUrl = '';

  get tokenUri(): string {
    return `${this.baseUrl}token`;
  }

  serviceAccount(): Record<string, string> {
    return {
      type: 'service_account',
      project_id: 'example-project',
      private_key_id: 'kid-1',
      private_key: this.keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      client_email: this.clientEmail,
      client_id: '1234567890',
      token_uri: this.tokenUri,
    };
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://x');
    const path = decodeURIComponent(url.pathname);
    this.calls.push({ method: req.method ?? '', path });
    const traceparent = req.headers.traceparent;
    this.traceparents.push(typeof traceparent === 'string' ? traceparent : undefined);
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(value));
    };

    if (req.method === 'POST' && path === '/token') {
      if (this.failTokens) return json(500, { error: 'internal' });
      const form = new URLSearchParams(body);
      if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return json(400, { error: 'unsupported_grant_type' });
      const [h, c, s] = (form.get('assertion') ?? '').split('.');
      const verified = createVerify('RSA-SHA256')
        .update(`${h}.${c}`)
        .verify(this.keys.publicKey, Buffer.from(s ?? '', 'base64url'));
      const claims = verified ? JSON.parse(Buffer.from(c, 'base64url').toString('utf8')) : null;
      if (!claims || claims.iss !== this.clientEmail || claims.aud !== this.tokenUri || claims.scope !== 'https://www.googleapis.com/auth/androidpublisher') {
        return json(400, { error: 'invalid_grant' });
      }
      const token = `ya29.standin-${++this.tokensIssued}`;
      this.issued.add(token);
      return json(200, { access_token: token, expires_in: 3599, token_type: 'Bearer' });
    }

    const auth = req.headers.authorization ?? '';
    if (!this.issued.has(auth.replace(/^Bearer /, ''))) return json(401, { error: { code: 401, message: 'Request had invalid authentication credentials.' } });
    const prefix = '/androidpublisher/v3/applications/';
    if (this.hangReads && req.method === 'GET') return;
    if (!path.startsWith(prefix)) return json(404, { error: { code: 404, message: 'Not found' } });
    const rest = path.slice(prefix.length);
    let m: RegExpMatchArray | null;
    if (req.method === 'GET' && (m = rest.match(/^([^/]+)\/purchases\/subscriptionsv2\/tokens\/([^/]+)$/))) {
      if (this.failReads) return json(500, { error: { code: 500, message: 'Backend Error' } });
      const purchase = this.subscriptions.get(`${m[1]}|${m[2]}`);
      return purchase
        ? json(200, { kind: 'androidpublisher#subscriptionPurchaseV2', ...purchase })
        : json(404, { error: { code: 404, message: 'The purchase token was not found.' } });
    }
    if (req.method === 'GET' && (m = rest.match(/^([^/]+)\/purchases\/products\/([^/]+)\/tokens\/([^/]+)$/))) {
      if (this.failReads) return json(500, { error: { code: 500, message: 'Backend Error' } });
      const purchase = this.products.get(`${m[1]}|${m[2]}|${m[3]}`);
      return purchase
        ? json(200, { kind: 'androidpublisher#productPurchase', ...purchase })
        : json(404, { error: { code: 404, message: 'The purchase token was not found.' } });
    }
    if (req.method === 'GET' && (m = rest.match(/^([^/]+)\/purchases\/voidedpurchases$/))) {
      if (this.failReads) return json(500, { error: { code: 500, message: 'Backend Error' } });
      const query = Object.fromEntries(url.searchParams.entries());
      this.voidedQueries.push({ packageName: m[1], query });
      const start = Number(query.startTime ?? 0);
      const end = Number(query.endTime ?? Date.now());
      const within = (this.voided.get(m[1]) ?? []).filter((entry) => {
        const at = Number(entry.voidedTimeMillis);
        return at >= start && at <= end;
      });
      const size = Math.min(this.voidedPageSize, Number(query.maxResults ?? 1000));
      const offset = query.token ? Number(Buffer.from(query.token, 'base64url').toString('utf8')) : 0;
      const page = within.slice(offset, offset + size);
      const next = offset + size < within.length ? Buffer.from(String(offset + size)).toString('base64url') : undefined;
      return json(200, {
        pageInfo: { totalResults: within.length, resultPerPage: size, startIndex: offset },
        ...(next ? { tokenPagination: { nextPageToken: next } } : {}),
        voidedPurchases: page.map((entry) => ({ kind: 'androidpublisher#voidedPurchase', ...entry })),
      });
    }
    if (req.method === 'POST' && (m = rest.match(/^([^/]+)\/purchases\/subscriptions\/([^/]+)\/tokens\/([^/]+):acknowledge$/))) {
      const purchase = this.subscriptions.get(`${m[1]}|${m[3]}`);
      if (!purchase) return json(404, { error: { code: 404, message: 'not found' } });
      purchase.acknowledgementState = 'ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED';
      this.acknowledged.push(`subscription:${m[2]}:${m[3]}`);
      res.writeHead(200);
      return void res.end();
    }
    if (req.method === 'POST' && (m = rest.match(/^([^/]+)\/purchases\/products\/([^/]+)\/tokens\/([^/]+):acknowledge$/))) {
      const purchase = this.products.get(`${m[1]}|${m[2]}|${m[3]}`);
      if (!purchase) return json(404, { error: { code: 404, message: 'not found' } });
      purchase.acknowledgementState = 1;
      this.acknowledged.push(`product:${m[2]}:${m[3]}`);
      res.writeHead(200);
      return void res.end();
    }
    return json(404, { error: { code: 404, message: `No route ${req.method} ${path}` } });
  }
}
