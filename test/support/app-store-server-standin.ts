import { generateKeyPairSync, verify } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type StoreChain, type TransactionFields, signStoreJws } from './store-signing.js';

export type AppStoreEnv = 'production' | 'sandbox';

/** One subscription the stand-in reports: its status (1 active … 5 revoked), last transaction and renewal info. */
export interface StandInSubscription {
  status: number;
  transaction: TransactionFields;
  renewal?: Record<string, unknown>;
}

/** A programmed failure of one environment: an HTTP status (with headers), or no answer at all. */
export type AppStoreFault = { status: number; headers?: Record<string, string> } | 'hang';

/**
 * A stand-in for the App Store Server API on 127.0.0.1, both environments on one server
 * (`<baseUrl>/production` and `<baseUrl>/sandbox` are the roots to configure): `GET
 * /inApps/v1/subscriptions/{transactionId}` ("Get All Subscription Statuses") answers the
 * programmed subscriptions of the original transaction id, their transaction and renewal info
 * signed with the test chain of store-signing.ts; `404` (errorCode 4040010) for an unknown id;
 * programmable faults (429 with Retry-After, 5xx, a hang). `PUT
 * /inApps/v2/transactions/consumption/{transactionId}` ("Send Consumption Information") records
 * the body in `consumption` and answers `202`. Requests must carry the ES256 bearer token
 * signed with this stand-in's key (`secrets()`).
 */
export class AppStoreServerStandIn {
  readonly subscriptions: Record<AppStoreEnv, Map<string, StandInSubscription>> = { production: new Map(), sandbox: new Map() };
  readonly faults: Record<AppStoreEnv, AppStoreFault | null> = { production: null, sandbox: null };
  /** Every request, as `<env> <path>`. */
  readonly calls: string[] = [];
  readonly refusedTokens: string[] = [];
  /** Every consumption information received: its environment, transaction id and JSON body. */
  readonly consumption: { env: AppStoreEnv; transactionId: string; body: Record<string, unknown> }[] = [];
  readonly keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  readonly keyId = 'STANDINKEY1';
  readonly issuerId = '57246542-96fe-1a63-e053-0824d011072a';
  private server: Server | undefined;
  private readonly hung = new Set<ServerResponse>();
  baseUrl = '';

  constructor(
    /** The chain the answers are signed with (a test may swap it for one the project does not trust). */
    public chain: StoreChain,
    private readonly bundleId: string,
  ) {}

  /** The project's `ios_store` secrets for this stand-in. */
  secrets(): { issuerId: string; keyId: string; privateKey: string } {
    return { issuerId: this.issuerId, keyId: this.keyId, privateKey: this.keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
  }

  rootOf(env: AppStoreEnv): string {
    return `${this.baseUrl}/${env}`;
  }

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

  /** Whether the bearer token is an ES256 JWT of this key for the bundle id (what Apple checks). */
  private authorized(header: string | undefined): boolean {
    const token = (header ?? '').replace(/^Bearer /, '');
    const [h, p, s] = token.split('.');
    if (!h || !p || !s) return false;
    const ok = verify('sha256', Buffer.from(`${h}.${p}`), { key: this.keys.publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(s, 'base64url'));
    if (!ok) return false;
    const head = JSON.parse(Buffer.from(h, 'base64url').toString('utf8'));
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString('utf8'));
    return (
      head.alg === 'ES256' && head.kid === this.keyId && claims.iss === this.issuerId && claims.bid === this.bundleId && claims.aud === 'appstoreconnect-v1'
    );
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? '/', 'http://x');
    const m = url.pathname.match(/^\/(production|sandbox)(\/.*)$/);
    const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
      res.end(JSON.stringify(value));
    };
    if (!m) return json(404, { errorCode: 4040000, errorMessage: 'not found' });
    const env = m[1] as AppStoreEnv;
    const path = m[2];
    this.calls.push(`${env} ${path}`);
    const fault = this.faults[env];
    if (fault === 'hang') {
      this.hung.add(res);
      return;
    }
    if (fault) return json(fault.status, fault.status === 429 ? { errorCode: 4290000, errorMessage: 'Rate limit exceeded.' } : {}, fault.headers);
    if (!this.authorized(req.headers.authorization)) {
      this.refusedTokens.push(req.headers.authorization ?? '');
      res.writeHead(401);
      return void res.end();
    }
    const consumption = path.match(/^\/inApps\/v2\/transactions\/consumption\/([^/]+)$/);
    if (req.method === 'PUT' && consumption) {
      this.consumption.push({ env, transactionId: decodeURIComponent(consumption[1]), body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      res.writeHead(202);
      return void res.end();
    }
    const status = path.match(/^\/inApps\/v1\/subscriptions\/([^/]+)$/);
    if (req.method !== 'GET' || !status) return json(404, { errorCode: 4040000, errorMessage: 'not found' });
    const sub = this.subscriptions[env].get(decodeURIComponent(status[1]));
    if (!sub) return json(404, { errorCode: 4040010, errorMessage: 'Transaction id not found.' });
    const environment = env === 'production' ? 'Production' : 'Sandbox';
    const renewal = {
      originalTransactionId: sub.transaction.originalTransactionId,
      autoRenewProductId: sub.transaction.productId,
      productId: sub.transaction.productId,
      autoRenewStatus: sub.status === 1 ? 1 : 0,
      signedDate: sub.transaction.signedDate,
      environment,
      ...sub.renewal,
    };
    return json(200, {
      environment,
      bundleId: this.bundleId,
      appAppleId: 1234567890,
      data: [
        {
          subscriptionGroupIdentifier: '21000000',
          lastTransactions: [
            {
              status: sub.status,
              originalTransactionId: sub.transaction.originalTransactionId,
              signedTransactionInfo: signStoreJws(this.chain, { ...sub.transaction, environment }),
              signedRenewalInfo: signStoreJws(this.chain, renewal),
            },
          ],
        },
      ],
    });
  }
}
