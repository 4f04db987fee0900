import { Module, type OnModuleInit } from '@nestjs/common';
import { KeysModule } from '../../keys/src/index.js';
import { ErasureHooks, IdentityModule } from '../../identity/src/index.js';
import { EntitlementsModule } from '../../entitlements/src/index.js';
import { RailsModule } from '../../rails/src/index.js';
import { MigratedUsersRepository } from './users/migrated-users.repository.js';
import { MigrationController } from './users/migration.controller.js';
import { UserMigrationService } from './users/user-migration.service.js';

/** Bulk user migration (POST /v1/migration/users). */
@Module({
  imports: [KeysModule, IdentityModule, EntitlementsModule, RailsModule],
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
    this.erasureHooks.register('migration.migrated_users', async (scope, subject, manager) => {
      if (subject.deviceOnly) return;
      await this.migratedUsers.erase(scope, subject.customerId, subject.userIds, manager);
    });
  }
}
