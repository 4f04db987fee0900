import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  json: Record<string, any>;
  receivedAtMs: number;
}

/** How a path answers: a status, or `hang` (the connection is held open, never answered). */
export type ReceiverBehaviour = number | 'hang';

/** An app's webhook receiver stood in by a local HTTP server; every path is an endpoint. */
export interface WebhookReceiver {
  url(path: string): string;
  received: ReceivedWebhook[];
  on(path: string, behaviour: ReceiverBehaviour): void;
  of(path: string): ReceivedWebhook[];
  /** Requests of a `hang` path held open now (their connections not yet closed by the sender). */
  hanging(path: string): number;
  waitFor(predicate: (hooks: ReceivedWebhook[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const behaviours = new Map<string, ReceiverBehaviour>();
  const held = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      const behaviour = behaviours.get(path) ?? 200;
      const body = Buffer.concat(chunks).toString('utf8');
      if (behaviour === 'hang') {
        held.set(path, (held.get(path) ?? 0) + 1);
        res.on('close', () => held.set(path, (held.get(path) ?? 1) - 1));
        return;
      }
      received.push({ path, headers: req.headers, body, json: JSON.parse(body), receivedAtMs: Date.now() });
      res.writeHead(behaviour, { 'content-type': 'text/plain' }).end('x'.repeat(behaviour === 200 ? 2 : 10_000));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    received,
    on: (path, behaviour) => behaviours.set(path, behaviour),
    of: (path) => received.filter((r) => r.path === path),
    hanging: (path) => held.get(path) ?? 0,
    async waitFor(predicate, timeoutMs = 10_000) {
      const until = Date.now() + timeoutMs;
      while (!predicate(received)) {
        if (Date.now() > until) throw new Error(`webhook receiver: condition not met in ${timeoutMs} ms (${received.length} received)`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The check the public Node client's verifyWebhookSignature makes, stated from its
 * description: HMAC-SHA256 keyed with the secret string, hex, over "{t}.{raw body}", a
 * 5-minute tolerance, and the last v1 of the header.
 */
export function verifyServiceSignature(body: string, header: string, secret: string, nowSeconds = Math.floor(Date.now() / 1000)): boolean {
  const parts = header.split(',').map((p) => p.split('='));
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  const v1 = parts.filter(([k]) => k === 'v1').map(([, v]) => v);
  const signature = v1[v1.length - 1];
  if (!Number.isFinite(t) || !signature || Math.abs(nowSeconds - t) > 300) return false;
  const expected = Buffer.from(createHmac('sha256', secret).update(`${t}.${body}`).digest('hex'));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
