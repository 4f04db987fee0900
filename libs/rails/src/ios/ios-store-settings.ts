import { X509Certificate } from 'node:crypto';
import type { ConsumptionSettings } from '../refunds/consumption.js';

/** The operator's settings of the iOS store rail (non-secret). */
export interface IosStoreSettings {
  bundleId: string;
  /** The app's Apple id; checked on production notifications when configured. */
  appAppleId?: number;
  /** PEM certificates; the store's own roots when absent or empty. */
  trustedRootCertificates?: string[];
  /** How Apple refund requests are answered (absent: `off`). */
  consumption?: ConsumptionSettings;
}

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----\s*([A-Za-z0-9+/=\s]+?)\s*-----END CERTIFICATE-----/g;

/**
 * DER bytes of every certificate in a PEM string (one or more blocks); throws with a
 * reason when there is none or one does not parse as an X.509 certificate.
 */
export function parsePemCertificates(pem: string): Buffer[] {
  const ders: Buffer[] = [];
  for (const match of pem.matchAll(PEM_BLOCK)) {
    const der = Buffer.from(match[1].replace(/\s+/g, ''), 'base64');
    try {
      new X509Certificate(der);
    } catch {
      throw new Error('a certificate block does not parse as X.509');
    }
    ders.push(der);
  }
  if (ders.length === 0) throw new Error('not a PEM certificate (-----BEGIN CERTIFICATE----- … -----END CERTIFICATE-----)');
  return ders;
}
