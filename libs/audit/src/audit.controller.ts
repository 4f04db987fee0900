import { Controller, Get, Header, Param } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiError, ApiErrors } from '#platform';
import { type AuthContext, CurrentKey, RequireApiKey } from '#keys';
import { AuditJournal } from './audit-journal.service.js';
import { AuditEntryView } from './audit-entry.view.js';

@ApiTags('server')
@Controller('v1/server/audit')
export class AuditController {
  constructor(private readonly journal: AuditJournal) {}

  @Get(':eventId')
  @RequireApiKey({ kinds: ['secret'] })
  @Header('Cache-Control', 'private, no-store')
  @ApiOperation({ operationId: 'getAuditEntry', summary: "Read one audit entry of the key's project and environment (secret key only)" })
  @ApiParam({ name: 'eventId', example: 'srv_revoke_k3j2h1g0f9e8d7c6b5a4z3y2' })
  @ApiOkResponse({ type: AuditEntryView })
  @ApiErrors({ 400: ['invalid_param_value'] })
  async read(@CurrentKey() auth: AuthContext, @Param('eventId') eventId: string): Promise<AuditEntryView> {
    const data = eventId.length <= 128 ? await this.journal.find(auth, eventId) : null;
    if (!data) throw ApiError.invalidParam('eventId: no audit entry with this id in this project and environment');
    return { object: 'audit_entry', data };
  }
}
