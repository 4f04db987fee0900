import { Module, type OnModuleInit } from '@nestjs/common';
import { KeysModule } from '#keys';
import { ErasureHooks, IdentityModule } from '#identity';
import { EntitlementsModule } from '#entitlements';
import { AuditModule } from '#audit';
import { TrustAdminController } from './gate/trust-admin.controller.js';
import { TrustController } from './gate/trust.controller.js';
import { TrustGateService } from './gate/trust-gate.service.js';
import { TrustSettingsCache } from './gate/trust-settings.cache.js';
import { TrustSettingsRepository } from './gate/trust-settings.repository.js';
import { DeviceBindingRepository } from './bindings/device-binding.repository.js';
import { ResolveController } from './resolve/resolve.controller.js';
import { ResolveService } from './resolve/resolve.service.js';

/** Resolve: trust tiers and device bindings; the trust gate (block lists, review rules). */
@Module({
  imports: [KeysModule, IdentityModule, EntitlementsModule, AuditModule],
  controllers: [ResolveController, TrustController, TrustAdminController],
  providers: [DeviceBindingRepository, ResolveService, TrustSettingsRepository, TrustSettingsCache, TrustGateService],
})
export class TrustModule implements OnModuleInit {
  constructor(
    private readonly erasureHooks: ErasureHooks,
    private readonly bindings: DeviceBindingRepository,
  ) {}

  /** Erasure of a forgotten customer removes its device bindings. */
  onModuleInit(): void {
    this.erasureHooks.register('trust.device_bindings', (scope, subject) =>
      this.bindings.erase(scope, subject.customerId, subject.anonymousIds, subject.deviceOnly ?? false),
    );
  }
}
