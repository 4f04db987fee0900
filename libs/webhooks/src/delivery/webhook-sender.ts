import { lookup as dnsLookup } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
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

/** The HTTP side of a delivery: a POST, 10 s in all, no redirects, at most 4 KB of the answer read. */
export class WebhookSender {
  private readonly httpAgent = new http.Agent({ keepAlive: true });
  private readonly httpsAgent = new https.Agent({ keepAlive: true });

  constructor(private readonly allowPrivate: boolean) {}

  send(rawUrl: string, headers: Record<string, string>, body: string): Promise<SendOutcome> {
    return new Promise((resolve) => {
      let settled = false;
      const done = (outcome: SendOutcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(outcome);
      };
      let url: URL;
      try {
        url = new URL(rawUrl);
      } catch {
        return done({ ok: false, statusCode: null, error: 'invalid url' });
      }
      const host = url.hostname.replace(/^\[|\]$/g, '');
      if (!this.allowPrivate && (url.protocol !== 'https:' || (isIP(host) !== 0 && !isPublicAddress(host)))) {
        return done({ ok: false, statusCode: null, error: 'address refused: https and public addresses only' });
      }
      const secure = url.protocol === 'https:';
      const request = (secure ? https : http).request(url, {
        method: 'POST',
        agent: secure ? this.httpsAgent : this.httpAgent,
        headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
        ...(this.allowPrivate ? {} : { lookup: checkedLookup as never }),
      });
      const timer = setTimeout(() => {
        request.destroy(new Error(`timed out after ${DELIVERY_TIMEOUT_MS / 1000} s`));
      }, DELIVERY_TIMEOUT_MS);
      timer.unref();
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
