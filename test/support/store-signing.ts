/**
 * A test stand-in for the App Store's signing chain: a root, an intermediate and a leaf
 * certificate generated here (ECDSA P-256), with Apple's marker OIDs on the intermediate
 * (1.2.840.113635.100.6.2.1) and the leaf (1.2.840.113635.100.6.11.1), and ES256 JWS
 * signed by the leaf with the chain in `x5c` — the shape `SignedDataVerifier` of
 * `@apple/app-store-server-library` verifies. Configure `chain.rootPem` as the project's
 * trusted root (`PUT /admin/v1/projects/{id}/rails/ios_store`). Used by the purchase-sync
 * and the store-notification specs.
 */
import { type KeyObject, createPrivateKey, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { KJUR } from 'jsrsasign';

export const LEAF_MARKER_OID = '1.2.840.113635.100.6.11.1';
export const INTERMEDIATE_MARKER_OID = '1.2.840.113635.100.6.2.1';

export interface StoreChainOptions {
  /** Put the marker OID on the leaf (default true). */
  leafOid?: boolean;
  /** Put the marker OID on the intermediate (default true). */
  intermediateOid?: boolean;
  /** Validity window of every certificate (Unix ms); default a day ago to ten years ahead. */
  notBeforeMs?: number;
  notAfterMs?: number;
  /** Subject prefix, so two chains are told apart. */
  name?: string;
}

export interface StoreChain {
  rootPem: string;
  rootDer: Buffer;
  intermediateDer: Buffer;
  leafDer: Buffer;
  leafKey: KeyObject;
}

interface KeyPairPem {
  privatePem: string;
  publicPem: string;
}

function ecKeyPair(): KeyPairPem {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return {
    privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

/** X.509 UTCTime/GeneralizedTime string as jsrsasign takes it. */
function asn1Time(ms: number): string {
  const iso = new Date(ms).toISOString(); // 2026-11-22T22:41:07.000Z
  const compact = iso.slice(0, 19).replace(/[-:T]/g, '') + 'Z'; // 20261122224107Z
  const year = Number(compact.slice(0, 4));
  return year >= 2050 ? compact : compact.slice(2);
}

let serial = 1;

function certificate(input: {
  subject: string;
  issuer: string;
  subjectPublicPem: string;
  issuerPrivatePem: string;
  ca: boolean;
  markerOid?: string;
  notBeforeMs: number;
  notAfterMs: number;
}): Buffer {
  const ext: Record<string, unknown>[] = [{ extname: 'basicConstraints', cA: input.ca, critical: true }];
  ext.push({ extname: 'keyUsage', critical: true, names: input.ca ? ['keyCertSign', 'cRLSign'] : ['digitalSignature'] });
  if (input.markerOid) ext.push({ extname: input.markerOid, extn: '0500' });
  serial += 1;
  // jsrsasign builds the DER; node:crypto signs it (jsrsasign's pure-JS ECDSA is slow).
  const tbsobj = new KJUR.asn1.x509.TBSCertificate({
    version: 3,
    serial: { int: serial },
    issuer: { str: input.issuer },
    subject: { str: input.subject },
    notbefore: asn1Time(input.notBeforeMs),
    notafter: asn1Time(input.notAfterMs),
    sbjpubkey: input.subjectPublicPem,
    ext,
    sigalg: 'SHA256withECDSA',
  } as never);
  const sighex = sign('sha256', Buffer.from(tbsobj.getEncodedHex(), 'hex'), createPrivateKey(input.issuerPrivatePem)).toString('hex');
  const cert = new KJUR.asn1.x509.Certificate({ tbsobj, sigalg: 'SHA256withECDSA', sighex } as never);
  return Buffer.from(cert.getEncodedHex(), 'hex');
}

const toPem = (der: Buffer): string =>
  `-----BEGIN CERTIFICATE-----\n${der.toString('base64').replace(/(.{64})/g, '$1\n')}\n-----END CERTIFICATE-----\n`.replace(/\n\n/g, '\n');

/** A fresh root → intermediate → leaf chain. */
export function createStoreChain(options: StoreChainOptions = {}): StoreChain {
  const name = options.name ?? `Test Store ${randomUUID().slice(0, 8)}`;
  const notBeforeMs = options.notBeforeMs ?? Date.now() - 86_400_000;
  const notAfterMs = options.notAfterMs ?? Date.now() + 10 * 365 * 86_400_000;
  const root = ecKeyPair();
  const intermediate = ecKeyPair();
  const leaf = ecKeyPair();
  const rootSubject = `/C=US/O=${name}/CN=${name} Root CA`;
  const intermediateSubject = `/C=US/O=${name}/CN=${name} Intermediate CA`;
  const rootDer = certificate({
    subject: rootSubject,
    issuer: rootSubject,
    subjectPublicPem: root.publicPem,
    issuerPrivatePem: root.privatePem,
    ca: true,
    notBeforeMs,
    notAfterMs,
  });
  const intermediateDer = certificate({
    subject: intermediateSubject,
    issuer: rootSubject,
    subjectPublicPem: intermediate.publicPem,
    issuerPrivatePem: root.privatePem,
    ca: true,
    markerOid: options.intermediateOid === false ? undefined : INTERMEDIATE_MARKER_OID,
    notBeforeMs,
    notAfterMs,
  });
  const leafDer = certificate({
    subject: `/C=US/O=${name}/CN=${name} Signing`,
    issuer: intermediateSubject,
    subjectPublicPem: leaf.publicPem,
    issuerPrivatePem: intermediate.privatePem,
    ca: false,
    markerOid: options.leafOid === false ? undefined : LEAF_MARKER_OID,
    notBeforeMs,
    notAfterMs,
  });
  return { rootPem: toPem(rootDer), rootDer, intermediateDer, leafDer, leafKey: createPrivateKey(leaf.privatePem) };
}

const b64url = (input: Buffer | string): string => Buffer.from(input).toString('base64url');

/** ES256 JWS of `payload` signed by the chain's leaf, `x5c` = [leaf, intermediate, root]. */
export function signStoreJws(chain: StoreChain, payload: object, options: { key?: KeyObject } = {}): string {
  const header = { alg: 'ES256', x5c: [chain.leafDer, chain.intermediateDer, chain.rootDer].map((der) => der.toString('base64')) };
  const signingInput = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(payload))}`;
  const signature = sign('sha256', Buffer.from(signingInput), { key: options.key ?? chain.leafKey, dsaEncoding: 'ieee-p1363' });
  return `${signingInput}.${b64url(signature)}`;
}

/** Replaces the payload of a signed JWS (the signature no longer matches). */
export function tamperJws(jws: string, payload: object): string {
  const [header, , signature] = jws.split('.');
  return `${header}.${b64url(JSON.stringify(payload))}.${signature}`;
}

export type StoreEnvironment = 'Sandbox' | 'Production';

/** A JWSTransactionDecodedPayload (App Store Server API field names). */
export interface TransactionFields {
  transactionId: string;
  originalTransactionId: string;
  bundleId: string;
  productId: string;
  environment: StoreEnvironment | string;
  signedDate: number;
  purchaseDate?: number;
  originalPurchaseDate?: number;
  expiresDate?: number;
  type?: string;
  inAppOwnershipType?: 'PURCHASED' | 'FAMILY_SHARED';
  appAccountToken?: string;
  revocationDate?: number;
  revocationReason?: number;
  quantity?: number;
  [field: string]: unknown;
}

let sequence = 0;

/** A unique numeric-looking transaction id. */
export function newTransactionId(): string {
  sequence += 1;
  return `${2000000000000000 + Math.floor(Math.random() * 1e12) * 100 + (sequence % 100)}`;
}

/** An auto-renewable subscription transaction with sensible defaults. */
export function transactionPayload(fields: Partial<TransactionFields> & Pick<TransactionFields, 'bundleId' | 'productId' | 'signedDate'>): TransactionFields {
  const transactionId = fields.transactionId ?? newTransactionId();
  return {
    transactionId,
    originalTransactionId: fields.originalTransactionId ?? transactionId,
    environment: 'Sandbox',
    purchaseDate: fields.signedDate,
    originalPurchaseDate: fields.signedDate,
    type: 'Auto-Renewable Subscription',
    inAppOwnershipType: 'PURCHASED',
    quantity: 1,
    storefront: 'USA',
    storefrontId: '143441',
    transactionReason: 'PURCHASE',
    webOrderLineItemId: transactionId,
    ...fields,
  };
}

/** A signedRenewalInfo payload for `originalTransactionId`. */
export function renewalInfoPayload(fields: {
  originalTransactionId: string;
  productId: string;
  environment: StoreEnvironment | string;
  signedDate: number;
  autoRenewStatus?: 0 | 1;
}): Record<string, unknown> {
  return {
    autoRenewProductId: fields.productId,
    autoRenewStatus: 1,
    recentSubscriptionStartDate: fields.signedDate,
    renewalDate: fields.signedDate,
    ...fields,
  };
}

/**
 * An App Store Server Notification V2 `signedPayload` body: `data` carries the bundle id,
 * environment and the signed transaction / renewal info (sign those with signStoreJws first).
 */
export function notificationPayload(fields: {
  notificationType: string;
  subtype?: string;
  notificationUUID?: string;
  signedDate: number;
  bundleId: string;
  environment: StoreEnvironment | string;
  appAppleId?: number;
  signedTransactionInfo?: string;
  signedRenewalInfo?: string;
}): Record<string, unknown> {
  const { notificationType, subtype, notificationUUID, signedDate, ...data } = fields;
  return {
    notificationType,
    ...(subtype ? { subtype } : {}),
    notificationUUID: notificationUUID ?? randomUUID(),
    version: '2.0',
    signedDate,
    data: { ...data, status: 1 },
  };
}
