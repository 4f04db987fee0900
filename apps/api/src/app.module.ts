import { DynamicModule, Module } from '@nestjs/common';
import { PlatformModule, type PlatformOptions } from '../../../libs/platform/src/index.js';
import { KeysModule } from '../../../libs/keys/src/index.js';
import { AuditModule } from '../../../libs/audit/src/index.js';
import { IdentityModule } from '../../../libs/identity/src/index.js';
import { TrustModule } from '../../../libs/trust/src/index.js';
import { EntitlementsModule } from '../../../libs/entitlements/src/index.js';
import { TelemetryModule } from '../../../libs/telemetry/src/index.js';

/** Imports the context modules, nothing else. */
@Module({})
export class AppModule {
  static register(platform: PlatformOptions): DynamicModule {
    return {
      module: AppModule,
      imports: [PlatformModule.forRoot(platform), KeysModule, AuditModule, IdentityModule, EntitlementsModule, TrustModule, TelemetryModule],
    };
  }
}
