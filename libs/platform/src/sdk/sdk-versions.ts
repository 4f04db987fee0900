import { readFileSync } from 'node:fs';
import path from 'node:path';
import semver from 'semver';
import { ConfigError } from '../config/app-config.js';

export const SDK_SURFACES = ['web', 'node', 'swift', 'react-native', 'android'] as const;
export type SdkSurface = (typeof SDK_SURFACES)[number];
/** The surfaces a 426 may name (the spec's list): an Android client is never refused with 426. */
export const VERSION_ERROR_SURFACES: readonly SdkSurface[] = ['web', 'node', 'swift', 'react-native'];

export interface SurfaceVersions {
  name: string;
  latest: string;
  minSupported: string;
  /** Names a client may use in `Service-Sdk-Version: <name>@<version>` or `sdk.name`. */
  clientNames: string[];
}

export type SdkVersionsManifest = Record<SdkSurface, SurfaceVersions>;

export const DEFAULT_SDK_VERSIONS_FILE = 'config/sdk-versions.json';

/** Loads and validates the manifest shipped with the service (fails fast at start). */
export function loadSdkVersionsManifest(file = process.env.SDK_VERSIONS_FILE || DEFAULT_SDK_VERSIONS_FILE): SdkVersionsManifest {
  const resolved = path.resolve(process.cwd(), file);
  let parsed: { surfaces?: Record<string, Partial<SurfaceVersions>> };
  try {
    parsed = JSON.parse(readFileSync(resolved, 'utf8'));
  } catch {
    throw new ConfigError(`SDK versions manifest ${resolved} is missing or not JSON`);
  }
  const manifest = {} as SdkVersionsManifest;
  for (const surface of SDK_SURFACES) {
    const entry = parsed.surfaces?.[surface];
    if (!entry || typeof entry.name !== 'string' || !semver.valid(entry.latest) || !semver.valid(entry.minSupported)) {
      throw new ConfigError(`SDK versions manifest: surface "${surface}" needs name, latest and minSupported (semver)`);
    }
    manifest[surface] = {
      name: entry.name,
      latest: entry.latest!,
      minSupported: entry.minSupported!,
      clientNames: Array.isArray(entry.clientNames) ? entry.clientNames.map(String) : [entry.name],
    };
  }
  return manifest;
}

export interface SdkIdentity {
  name: string;
  version: string;
}

/** Parses `<name>@<version>`; the name may itself be scoped (`@service/web@1.2.3`). */
export function parseSdkHeader(header: string | undefined): SdkIdentity | undefined {
  if (!header) return undefined;
  const value = header.trim();
  const at = value.lastIndexOf('@');
  if (at <= 0 || at === value.length - 1) return undefined;
  return { name: value.slice(0, at), version: value.slice(at + 1) };
}

export function surfaceOfClient(manifest: SdkVersionsManifest, clientName: string): SdkSurface | undefined {
  return SDK_SURFACES.find((surface) => manifest[surface].clientNames.includes(clientName));
}

/** True when `version` is a valid semver strictly below the surface's floor. */
export function isBelowFloor(manifest: SdkVersionsManifest, surface: SdkSurface, version: string): boolean {
  const coerced = semver.valid(version) ?? semver.valid(semver.coerce(version));
  return coerced !== null && semver.lt(coerced, manifest[surface].minSupported);
}
