import { Body, Controller, Header, HttpCode, Post } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors, BodyLimit, MIGRATION_BODY_LIMIT_BYTES, MIGRATION_JSON_BOUNDS } from '#platform';
import { type AuthContext, CurrentKey, RequireApiKey } from '#keys';
import { MigrationUsersDto } from './migration-users.dto.js';
import { MigrationResultView } from './migration-result.view.js';
import { UserMigrationService } from './user-migration.service.js';

@ApiTags('migration')
@Controller('v1/migration')
export class MigrationController {
  constructor(private readonly migration: UserMigrationService) {}

  @Post('users')
  @HttpCode(200)
  @RequireApiKey({ kinds: ['secret'] })
  @BodyLimit(MIGRATION_BODY_LIMIT_BYTES, { jsonBounds: MIGRATION_JSON_BOUNDS })
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    operationId: 'migrateUsers',
    summary: 'Bulk user migration (secret key only)',
    description:
      '1 to 1,000 rows, processed in order; a bad row lands in details.errors, rail ids resolving to different customers in ' +
      'details.conflicts (never merged). Asserted entitlements become lifetime grants only for customers with no rail behind them. ' +
      'Re-running the same or an overlapping migration converges.',
  })
  @ApiBody({ type: MigrationUsersDto })
  @ApiOkResponse({ type: MigrationResultView })
  @ApiErrors({ 400: ['missing_required_param'] })
  migrate(@CurrentKey() auth: AuthContext, @Body() body: unknown): Promise<MigrationResultView> {
    return this.migration.migrate(auth, body);
  }
}
