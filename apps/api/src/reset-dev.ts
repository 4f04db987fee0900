// `npm run reset:dev`: removes the embedded PostgreSQL data of `npm start` wherever it lives
// (the checkout's .data/pg or, as root in a checkout the postgres user cannot reach, its staged
// twin under $TMPDIR), stopping a server left running on it; the next start prints new demo keys.
import { EmbeddedResetRefusedError, resetEmbeddedData } from '#platform';

resetEmbeddedData({ env: process.env, log: (message) => process.stdout.write(`${message}\n`) }).then(
  () => process.exit(0),
  (err: unknown) => {
    const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
    process.stderr.write(`${err instanceof EmbeddedResetRefusedError ? 'reset:dev refused' : 'reset:dev failed'}: ${message}\n`);
    process.exit(1);
  },
);
