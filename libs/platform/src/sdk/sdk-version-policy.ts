import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { ApiError } from '../errors/api-error.js';
import { type SdkIdentity, type SdkSurface, type SdkVersionsManifest, VERSION_ERROR_SURFACES, isBelowFloor, surfaceOfClient } from './sdk-versions.js';

export const SDK_VERSIONS_MANIFEST = Symbol('SDK_VERSIONS_MANIFEST');

/**
 * The version floor of the manifest, applied to incoming clients. Ships dark: the 426 is
 * only raised when SDK_VERSION_ENFORCEMENT is on.
 */
@Injectable()
export class SdkVersionPolicy {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SDK_VERSIONS_MANIFEST) readonly manifest: SdkVersionsManifest,
  ) {}

  get enforced(): boolean {
    return this.config.sdkVersionEnforcement;
  }

  surfaceOf(sdk: SdkIdentity | undefined): SdkSurface | undefined {
    return sdk ? surfaceOfClient(this.manifest, sdk.name) : undefined;
  }

  /**
   * Throws 426 sdk_version_unsupported when enforcement is on and the client is below the
   * floor, for the surfaces the 426 body may name (not android: see VERSION_ERROR_SURFACES).
   */
  assertSupported(sdk: SdkIdentity | undefined): void {
    if (!this.enforced || !sdk) return;
    const surface = this.surfaceOf(sdk);
    if (surface && VERSION_ERROR_SURFACES.includes(surface) && isBelowFloor(this.manifest, surface, sdk.version)) {
      throw ApiError.sdkVersionUnsupported(this.manifest[surface].minSupported, surface);
    }
  }
}
