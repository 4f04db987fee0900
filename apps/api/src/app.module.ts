import { DynamicModule, Module, type Type } from '@nestjs/common';
import { PlatformModule, type PlatformOptions } from '../../../libs/platform/src/index.js';
import { KeysModule } from '../../../libs/keys/src/index.js';
import { AuditModule } from '../../../libs/audit/src/index.js';
import { IdentityModule } from '../../../libs/identity/src/index.js';
import { TrustModule } from '../../../libs/trust/src/index.js';
import { EntitlementsModule } from '../../../libs/entitlements/src/index.js';
import { TelemetryModule } from '../../../libs/telemetry/src/index.js';
import { RailsModule, StoreNotificationsModule } from '../../../libs/rails/src/index.js';
import { SourceMapsModule } from '../../../libs/sourcemaps/src/index.js';
import { MigrationModule } from '../../../libs/migration/src/index.js';
import { ReportingModule } from '../../../libs/reporting/src/index.js';

/** Imports the context modules, nothing else. */
@Module({})
export class AppModule {
  static register(platform: PlatformOptions, extraModules: Type<unknown>[] = []): DynamicModule {
    return {
      module: AppModule,
      imports: [
        PlatformModule.forRoot(platform),
        KeysModule,
        AuditModule,
        IdentityModule,
        EntitlementsModule,
        TrustModule,
        TelemetryModule,
        RailsModule,
        StoreNotificationsModule,
        SourceMapsModule,
        MigrationModule,
        ReportingModule,
        ...extraModules,
      ],
    };
  }
}
