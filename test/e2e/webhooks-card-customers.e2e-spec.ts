import { type ProjectFixture } from '../support/fixtures.js';
import { tablesContaining } from '../support/plaintext-scan.js';
import { eventually, RailSecretsFile } from '../support/rail-secrets-file.js';
import { type TestApp } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';
import { cardWebhookHarness, SECRET_OLD, SECRET_NEW, SECRET_ROTATED } from '../support/harness/webhooks-card.js';

describe('webhooks: card payments, RAIL_SECRETS_FILE', () => {
  const h = cardWebhookHarness();
  let t: TestApp;
  let fx: ProjectFixture;
  let file: RailSecretsFile;
  beforeAll(() => {
    ({ t, fx, file } = h);
  });
  const { logs, event, send } = h;

  describe('RAIL_SECRETS_FILE', () => {
    it('every listed secret is tried (rotation): old and new both verify', async () => {
      expect((await send(event('invoice.paid', { id: 'in_1', object: 'invoice' }), { secret: SECRET_OLD })).status).toBe(200);
      expect((await send(event('invoice.paid', { id: 'in_1', object: 'invoice' }), { secret: SECRET_NEW })).status).toBe(200);
    });

    it('is re-read when it changes; a malformed file is logged and the last good content stays', async () => {
      const projects = (secrets: string[]) => ({ projects: { [fx.projectId]: { card_payments: { webhookSecrets: secrets } } } });
      file.write(projects([SECRET_ROTATED]));
      await eventually(async () => expect((await send(event('invoice.paid', { id: 'in_1', object: 'invoice' }), { secret: SECRET_ROTATED })).status).toBe(200));
      expectError(await send(event('invoice.paid', { id: 'in_1', object: 'invoice' }), { secret: SECRET_OLD }), 400, 'invalid_signature');

      logs.length = 0;
      file.writeText(`{"projects": {"${fx.projectId}": {"card_payments": {"webhookSecrets": ["${SECRET_NEW}"`);
      await eventually(async () => expect(logs.some((line) => line.level === 'error' && String(line.msg).includes('RAIL_SECRETS_FILE'))).toBe(true));
      expect(JSON.stringify(logs)).not.toContain(SECRET_NEW);
      expect((await send(event('invoice.paid', { id: 'in_1', object: 'invoice' }), { secret: SECRET_ROTATED })).status).toBe(200);

      file.write(projects([SECRET_NEW, SECRET_OLD]));
      await eventually(async () => expect((await send(event('invoice.paid', { id: 'in_1', object: 'invoice' }), { secret: SECRET_NEW })).status).toBe(200));
    });

    it('secrets never reach the database', async () => {
      const scanned = await tablesContaining(t.dataSource, [SECRET_OLD, SECRET_NEW, SECRET_ROTATED]);
      for (const { table, hits } of scanned) expect({ table, hits }).toEqual({ table, hits: 0 });
    });
  });
});
