import { createHmac } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

/** `whsec_` + standard base64 of HMAC-SHA256(signing key, "<endpointId>:<version>"): 32 bytes, never stored. */
export function deriveSecret(signingKey: Buffer, endpointId: string, version: number): string {
  return SECRET_PREFIX + createHmac('sha256', signingKey).update(`${endpointId}:${version}`).digest('base64');
}

/** The crossdeck-style v1: hex HMAC-SHA256 keyed with the secret string over "{t}.{body}". */
export function serviceSignatureV1(secret: string, t: number, body: string): string {
  return createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
}

/** `t=<t>,v1=<newest>[,v1=<older>]`: secrets newest first, so the previous one comes last. */
export function serviceSignatureHeader(secrets: readonly string[], t: number, body: string): string {
  return [`t=${t}`, ...secrets.map((secret) => `v1=${serviceSignatureV1(secret, t, body)}`)].join(',');
}

/** Standard Webhooks: `v1,<base64 HMAC-SHA256 over "{id}.{t}.{body}" keyed with the decoded secret>`, space separated. */
export function standardSignatureHeader(secrets: readonly string[], id: string, t: number, body: string): string {
  return secrets
    .map((secret) => {
      const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
      return `v1,${createHmac('sha256', key).update(`${id}.${t}.${body}`).digest('base64')}`;
    })
    .join(' ');
}
