import { lookup as dnsLookup } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { urlToHttpOptions } from 'node:url';
import { DELIVERY_TIMEOUT_MS, MAX_RESPONSE_BYTES } from '../domain/webhook-rules.js';
import { isPublicAddress } from '../domain/address-policy.js';

export interface SendOutcome {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | { address: string; family: number }[], family?: number) => void;

/**
 * Resolves a name and refuses it unless every address is public (the check repeated on every
 * connection, so a name that later resolves to a private address is never connected to).
 */
function checkedLookup(hostname: string, options: { all?: boolean }, callback: LookupCallback): void {
  dnsLookup(hostname, { all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    const refused = addresses.find((a) => !isPublicAddress(a.address));
    if (refused || addresses.length === 0) {
      const error: NodeJS.ErrnoException = new Error(`${hostname} resolves to a non-public address`);
      error.code = 'EADDRNOTPUBLIC';
      return callback(error, []);
    }
    if (options.all) return callback(null, addresses);
    callback(null, addresses[0].address, addresses[0].family);
  });
}

/** An endpoint URL as requests need it, or why it is refused. */
type Target = { refused: string } | { refused: null; secure: boolean; options: http.RequestOptions };

/** Endpoint URLs remembered at most; past it the cache starts over. */
const MAX_TARGETS = 4096;

/**
 * The HTTP side of a delivery: a POST, 10 s in all, no redirects, at most 4 KB of the answer
 * read. Connections are kept alive per host (the agents' pools), and each endpoint URL is
 * parsed and checked once, not per delivery (the address check on connection stays per connection).
 */
export class WebhookSender {
  private readonly httpAgent = new http.Agent({ keepAlive: true });
  private readonly httpsAgent = new https.Agent({ keepAlive: true });
  private readonly targets = new Map<string, Target>();

  constructor(private readonly allowPrivate: boolean) {}

  private target(rawUrl: string): Target {
    const cached = this.targets.get(rawUrl);
    if (cached) return cached;
    let target: Target;
    try {
      const url = new URL(rawUrl);
      const host = url.hostname.replace(/^\[|\]$/g, '');
      if (!this.allowPrivate && (url.protocol !== 'https:' || (isIP(host) !== 0 && !isPublicAddress(host)))) {
        target = { refused: 'address refused: https and public addresses only' };
      } else {
        const secure = url.protocol === 'https:';
        target = {
          refused: null,
          secure,
          options: {
            ...urlToHttpOptions(url),
            method: 'POST',
            agent: secure ? this.httpsAgent : this.httpAgent,
            ...(this.allowPrivate ? {} : { lookup: checkedLookup as never }),
          },
        };
      }
    } catch {
      target = { refused: 'invalid url' };
    }
    if (this.targets.size >= MAX_TARGETS) this.targets.clear();
    this.targets.set(rawUrl, target);
    return target;
  }

  /** Sends `body` (its bytes, shared by every delivery of an event); sets `Content-Length` in `headers`. */
  send(rawUrl: string, headers: Record<string, string>, body: Uint8Array): Promise<SendOutcome> {
    const target = this.target(rawUrl);
    if (target.refused !== null) return Promise.resolve({ ok: false, statusCode: null, error: target.refused });
    return new Promise((resolve) => {
      let settled = false;
      headers['Content-Length'] = String(body.byteLength);
      const request = (target.secure ? https : http).request({ ...target.options, headers });
      const timer = setTimeout(() => {
        request.destroy(new Error(`timed out after ${DELIVERY_TIMEOUT_MS / 1000} s`));
      }, DELIVERY_TIMEOUT_MS);
      timer.unref();
      const done = (outcome: SendOutcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(outcome);
      };
      request.on('error', (err: NodeJS.ErrnoException) => done({ ok: false, statusCode: null, error: (err.code ? `${err.code}: ` : '') + err.message }));
      request.on('response', (response) => {
        const statusCode = response.statusCode ?? 0;
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          // Past 4 KB the rest of the answer is not read: the connection is dropped.
          if (read > MAX_RESPONSE_BYTES) response.destroy();
        });
        const finish = () => {
          const ok = statusCode >= 200 && statusCode < 300;
          done({ ok, statusCode, error: ok ? null : statusCode >= 300 && statusCode < 400 ? `redirect ${statusCode} not followed` : `HTTP ${statusCode}` });
        };
        response.on('end', finish);
        response.on('close', finish);
        response.on('error', finish);
      });
      request.end(body);
    });
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}
