import { DynamicModule, Module, type Type } from '@nestjs/common';
import { PlatformModule, type PlatformOptions } from '#platform';
import { KeysModule } from '#keys';
import { AuditModule } from '#audit';
import { IdentityModule } from '#identity';
import { TrustModule } from '#trust';
import { EntitlementsModule } from '#entitlements';
import { CustomerConsoleModule, TelemetryModule } from '#telemetry';
import { RailsModule, StoreNotificationsModule } from '#rails';
import { SourceMapsModule } from '#sourcemaps';
import { MigrationModule } from '#migration';
import { ReportingModule } from '#reporting';
import { WebhooksModule } from '#webhooks';
import { ConsoleModule } from '#console';

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
        CustomerConsoleModule,
        RailsModule,
        StoreNotificationsModule,
        SourceMapsModule,
        MigrationModule,
        WebhooksModule,
        ReportingModule,
        ConsoleModule,
        ...extraModules,
      ],
    };
  }
}
