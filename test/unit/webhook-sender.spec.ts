import { WebhookSender } from '../../libs/webhooks/src/delivery/webhook-sender.js';

/** A refused or malformed endpoint settles its attempt as a failure; it never throws (an unhandled rejection would end the process). */
describe('webhook sender: refused targets', () => {
  const body = new TextEncoder().encode('{}');

  it('a private address without WEBHOOKS_ALLOW_PRIVATE is a failed attempt naming the refusal', async () => {
    await expect(new WebhookSender(false).send('https://127.0.0.1/hook', {}, body)).resolves.toEqual({
      ok: false,
      statusCode: null,
      error: 'address refused: https and public addresses only',
    });
  });

  it('plain http in production is refused the same way, also on the second attempt (the cached target)', async () => {
    const sender = new WebhookSender(false);
    for (let attempt = 0; attempt < 2; attempt++) {
      await expect(sender.send('http://hooks.example.com/in', {}, body)).resolves.toMatchObject({
        ok: false,
        error: 'address refused: https and public addresses only',
      });
    }
  });

  it('an unparsable URL is a failed attempt', async () => {
    await expect(new WebhookSender(true).send('not a url', {}, body)).resolves.toEqual({ ok: false, statusCode: null, error: 'invalid url' });
  });
});
