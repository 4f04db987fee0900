import { Module, type OnModuleInit } from '@nestjs/common';
import { KeysModule } from '#keys';
import { ErasureHooks, IdentityModule } from '#identity';
import { EntitlementsModule } from '#entitlements';
import { RailsModule, StoreNotificationsModule } from '#rails';
import { MigratedUsersRepository } from './users/migrated-users.repository.js';
import { MigrationController } from './users/migration.controller.js';
import { UserMigrationService } from './users/user-migration.service.js';

/** Bulk user migration (POST /v1/migration/users). */
@Module({
  imports: [KeysModule, IdentityModule, EntitlementsModule, RailsModule, StoreNotificationsModule],
  controllers: [MigrationController],
  providers: [MigratedUsersRepository, UserMigrationService],
})
export class MigrationModule implements OnModuleInit {
  constructor(
    private readonly erasureHooks: ErasureHooks,
    private readonly migratedUsers: MigratedUsersRepository,
  ) {}

  /** Erasure of a forgotten customer removes its migrated-user rows (display names). */
  onModuleInit(): void {
    this.erasureHooks.register('migration.migrated_users', async (scope, subject) => {
      if (subject.deviceOnly) return;
      await this.migratedUsers.erase(scope, subject.customerId, subject.userIds);
    });
  }
}
