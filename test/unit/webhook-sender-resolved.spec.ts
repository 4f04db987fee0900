import { WebhookSender } from '../../libs/webhooks/src/delivery/webhook-sender.js';

/** The name's answers, as the resolver would give them (every address of every family). */
const answers = new Map<string, { address: string; family: number }[]>();

jest.mock('node:dns', () => {
  const actual = jest.requireActual('node:dns');
  return {
    ...actual,
    lookup: (hostname: string, _options: unknown, callback: (err: Error | null, addresses: { address: string; family: number }[]) => void) => {
      const found = answers.get(hostname);
      if (!found) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
      setImmediate(() => callback(null, found));
    },
  };
});

/** At delivery time every address a name resolves to is checked, parsed, before connecting. */
describe('webhook sender: resolved addresses', () => {
  const body = new TextEncoder().encode('{}');

  it.each([
    '::ffff:0:7f00:1',
    '::127.0.0.1',
    '::ffff:127.0.0.1',
    '2002:7f00:1::',
    '2001:0:7f00:1::1',
    '64:ff9b::a9fe:a9fe',
    '64:ff9b:1::808:808',
    '100::1',
    'fd00::1',
    'fe80::1',
  ])('a name resolving to %s (beside a public address) is refused without connecting', async (address) => {
    const hostname = `hooks-${answers.size}.example.com`;
    answers.set(hostname, [
      { address: '93.184.216.34', family: 4 },
      { address, family: 6 },
    ]);
    const outcome = await new WebhookSender(false).send(`https://${hostname}/hook`, {}, body);
    expect(outcome).toMatchObject({ ok: false, statusCode: null });
    expect(outcome.error).toContain('resolves to a non-public address');
  });
});
