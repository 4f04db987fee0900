import { Body, Controller, Header, HttpCode, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors, Idempotent, RateLimit } from '#platform';
import { type AuthContext, CurrentKey, RequireApiKey } from '#keys';
import { PurchaseResultView, PurchaseSyncDto } from './purchase-sync.dto.js';
import { PurchaseSyncService } from './purchase-sync.service.js';

@ApiTags('purchases')
@Controller()
export class PurchaseSyncController {
  constructor(private readonly purchases: PurchaseSyncService) {}

  @Post(['v1/purchases/sync', 'v1/purchases'])
  @HttpCode(200)
  @RequireApiKey({ kinds: ['publishable', 'secret'] })
  @RateLimit('purchases')
  @Idempotent()
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    operationId: 'syncPurchase',
    summary: 'Forward a signed iOS store purchase (legacy alias: /v1/purchases)',
    description:
      'Verifies the JWS against the rail certificate chain (production, then sandbox), checks its environment against the key, resolves the customer and applies the purchase.',
  })
  @ApiOkResponse({ type: PurchaseResultView })
  @ApiErrors({ 400: ['missing_required_param'], 403: ['env_mismatch'] })
  sync(@CurrentKey() auth: AuthContext, @Body() body: PurchaseSyncDto): Promise<PurchaseResultView> {
    return this.purchases.sync(auth, body);
  }
}
