import { Body, Controller, Get, Param, Put } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors, Operator } from '#platform';
import { TrustSettingsDto, TrustSettingsView } from './trust.dto.js';
import { TrustGateService } from './trust-gate.service.js';

@ApiTags('operator')
@Operator()
@Controller('admin/v1/projects/:projectId/trust')
export class TrustAdminController {
  constructor(private readonly gate: TrustGateService) {}

  @Put()
  @ApiOperation({
    operationId: 'adminReplaceTrustSettings',
    summary: "Replace the project's trust gate settings (block lists, review rules, support email); returns them",
  })
  @ApiOkResponse({ type: TrustSettingsView })
  @ApiErrors({ 400: ['invalid_param_value', 'missing_required_param'], 404: ['resource_missing'] })
  replace(@Param('projectId') projectId: string, @Body() body: TrustSettingsDto): Promise<TrustSettingsView> {
    return this.gate.replaceSettings(projectId, body);
  }

  @Get()
  @ApiOperation({ operationId: 'adminGetTrustSettings', summary: "The project's trust gate settings" })
  @ApiOkResponse({ type: TrustSettingsView })
  @ApiErrors({ 404: ['resource_missing'] })
  read(@Param('projectId') projectId: string): Promise<TrustSettingsView> {
    return this.gate.readSettings(projectId);
  }
}
