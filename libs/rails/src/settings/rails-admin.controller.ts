import { Body, Controller, Param, Put } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors, Operator } from '#platform';
import { RailView } from '../operator/rails-operator.dto.js';
import { PutAndroidStoreRailDto, PutCardPaymentsRailDto } from './rails-admin.dto.js';
import { StoreRailSettings } from './store-rail-settings.service.js';

/** Operator settings of the notification rails (GET …/rails and PUT …/rails/ios_store: RailsOperatorController). */
@ApiTags('operator')
@Operator()
@Controller('admin/v1/projects/:projectId/rails')
export class RailsAdminController {
  constructor(private readonly rails: StoreRailSettings) {}

  @Put('card_payments')
  @ApiOperation({
    operationId: 'adminPutCardPaymentsRail',
    summary: 'Enable the card-payment rail (webhook secrets go into RAIL_SECRETS_FILE, never here)',
    description: 'gracePeriodDays: an integer 0 to 30 (absent: 0), else 400 invalid_param_value.',
  })
  @ApiOkResponse({ type: RailView })
  @ApiErrors({ 400: ['invalid_param_value'] })
  putCardPayments(@Param('projectId') projectId: string, @Body() body: PutCardPaymentsRailDto): Promise<RailView> {
    return this.rails.put(projectId, 'card_payments', {
      ...(body.accountId !== undefined ? { accountId: body.accountId } : {}),
      ...(body.gracePeriodDays !== undefined ? { gracePeriodDays: body.gracePeriodDays } : {}),
    });
  }

  @Put('android_store')
  @ApiOperation({
    operationId: 'adminPutAndroidStoreRail',
    summary: 'Enable the Android store rail for one package (push token and service account go into RAIL_SECRETS_FILE)',
  })
  @ApiOkResponse({ type: RailView })
  @ApiErrors({ 400: ['missing_required_param'] })
  putAndroidStore(@Param('projectId') projectId: string, @Body() body: PutAndroidStoreRailDto): Promise<RailView> {
    return this.rails.put(projectId, 'android_store', { packageName: body.packageName });
  }
}
