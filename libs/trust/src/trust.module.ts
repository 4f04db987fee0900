import { Module, type OnModuleInit } from '@nestjs/common';
import { KeysModule } from '#keys';
import { ErasureHooks, IdentityModule } from '#identity';
import { EntitlementsModule } from '#entitlements';
import { DeviceBindingRepository } from './bindings/device-binding.repository.js';
import { ResolveController } from './resolve/resolve.controller.js';
import { ResolveService } from './resolve/resolve.service.js';

/** Resolve: trust tiers and device bindings. */
@Module({
  imports: [KeysModule, IdentityModule, EntitlementsModule],
  controllers: [ResolveController],
  providers: [DeviceBindingRepository, ResolveService],
})
export class TrustModule implements OnModuleInit {
  constructor(
    private readonly erasureHooks: ErasureHooks,
    private readonly bindings: DeviceBindingRepository,
  ) {}

  /** Erasure of a forgotten customer removes its device bindings. */
  onModuleInit(): void {
    this.erasureHooks.register('trust.device_bindings', (scope, subject, manager) =>
      this.bindings.erase(scope, subject.customerId, subject.anonymousIds, subject.deviceOnly ?? false, manager),
    );
  }
}
