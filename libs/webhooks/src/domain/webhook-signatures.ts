import { createHmac } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

/** `whsec_` + standard base64 of HMAC-SHA256(signing key, "<endpointId>:<version>"): 32 bytes, never stored. */
export function deriveSecret(signingKey: Buffer, endpointId: string, version: number): string {
  return SECRET_PREFIX + createHmac('sha256', signingKey).update(`${endpointId}:${version}`).digest('base64');
}

/** A body as it is signed and sent: text, or its UTF-8 bytes (the same signature either way). */
export type SignedBody = string | Uint8Array;

/** The crossdeck-style v1: hex HMAC-SHA256 keyed with the secret string over "{t}.{body}". */
export function serviceSignatureV1(secret: string, t: number, body: SignedBody): string {
  return createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex');
}

/** `t=<t>,v1=<newest>[,v1=<older>]`: secrets newest first, so the previous one comes last. */
export function serviceSignatureHeader(secrets: readonly string[], t: number, body: SignedBody): string {
  let header = `t=${t}`;
  for (const secret of secrets) header += `,v1=${serviceSignatureV1(secret, t, body)}`;
  return header;
}

/** The Standard Webhooks key of a secret: the bytes its base64 (after `whsec_`) stands for. */
export function standardSigningKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

/** Standard Webhooks: `v1,<base64 HMAC-SHA256 over "{id}.{t}.{body}" keyed with the decoded secret>`, space separated. */
export function standardSignatureHeader(secrets: readonly string[], id: string, t: number, body: SignedBody, keys?: readonly Buffer[]): string {
  let header = '';
  for (let i = 0; i < secrets.length; i++) {
    const key = keys?.[i] ?? standardSigningKey(secrets[i]);
    header += `${i === 0 ? '' : ' '}v1,${createHmac('sha256', key).update(`${id}.${t}.`).update(body).digest('base64')}`;
  }
  return header;
}
