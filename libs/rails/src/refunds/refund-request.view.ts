import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsOptional } from 'class-validator';
import {
  CONSUMPTION_MODES,
  type ConsumptionAnswerFields,
  type ConsumptionMode,
  REFUND_PREFERENCES,
  REFUND_REQUEST_STATES,
  type RefundPreferenceSetting,
  type RefundRequestAnswer,
  type RefundRequestState,
} from './consumption.js';

const PREFERENCE_DESCRIPTION =
  'Your preferred outcome: decline, grant_full, grant_prorated (the store works out the share of an auto-renewable subscription) or no_preference (none sent)';

/** The fields of an answer, sent as the body of "Send Consumption Information". */
export class RefundRequestAnswerDto implements ConsumptionAnswerFields {
  @ApiProperty({
    description: 'Whether the customer consented to share consumption data; the store refuses an answer without it (must be true)',
    example: true,
  })
  @IsBoolean({ message: 'customerConsented must be a boolean' })
  customerConsented: boolean;

  @ApiProperty({ enum: REFUND_PREFERENCES, description: PREFERENCE_DESCRIPTION })
  @IsIn(REFUND_PREFERENCES, { message: 'refundPreference must be decline, grant_full, grant_prorated or no_preference' })
  refundPreference: RefundPreferenceSetting;

  @ApiProperty({ description: 'Whether a free sample, trial or description of the content was provided before the purchase', example: true })
  @IsBoolean({ message: 'sampleContentProvided must be a boolean' })
  sampleContentProvided: boolean;
}

/** `consumption` of `PUT …/rails/ios_store`: how refund requests are answered. */
export class ConsumptionSettingsDto {
  @ApiProperty({
    enum: CONSUMPTION_MODES,
    description: 'off: requests are recorded only; manual: POST /v1/server/refund-requests/{id}/answer; auto: the service answers within 60 s',
  })
  @IsIn(CONSUMPTION_MODES, { message: 'mode must be off, manual or auto' })
  mode: ConsumptionMode;

  @ApiPropertyOptional({ description: 'auto: whether customers consented to share consumption data (nothing is sent without it); default false' })
  @IsOptional()
  @IsBoolean({ message: 'customerConsented must be a boolean' })
  customerConsented?: boolean;

  @ApiPropertyOptional({ enum: REFUND_PREFERENCES, description: `auto: ${PREFERENCE_DESCRIPTION}; default no_preference` })
  @IsOptional()
  @IsIn(REFUND_PREFERENCES, { message: 'refundPreference must be decline, grant_full, grant_prorated or no_preference' })
  refundPreference?: RefundPreferenceSetting;

  @ApiPropertyOptional({ description: 'auto: whether a free sample, trial or description of the content was provided before purchase; default false' })
  @IsOptional()
  @IsBoolean({ message: 'sampleContentProvided must be a boolean' })
  sampleContentProvided?: boolean;
}

/** The consumption settings as stored and shown (defaults filled). */
export class ConsumptionSettingsView {
  @ApiProperty({ enum: CONSUMPTION_MODES }) mode: ConsumptionMode;
  @ApiProperty() customerConsented: boolean;
  @ApiProperty({ enum: REFUND_PREFERENCES }) refundPreference: RefundPreferenceSetting;
  @ApiProperty() sampleContentProvided: boolean;
}

export class RefundRequestAnswerView implements RefundRequestAnswer {
  @ApiProperty() customerConsented: boolean;
  @ApiProperty({ enum: REFUND_PREFERENCES }) refundPreference: RefundPreferenceSetting;
  @ApiProperty() sampleContentProvided: boolean;
  @ApiProperty({ enum: ['delivered'] }) deliveryStatus: 'delivered';
  @ApiProperty({ enum: ['auto', 'manual'], description: "auto: the rail's consumption settings; manual: POST …/answer" }) source: 'auto' | 'manual';
  @ApiProperty({ description: 'When it was sent (Unix seconds)' }) sentAt: number;
}

/** One Apple refund request (`CONSUMPTION_REQUEST`). */
export class RefundRequestView {
  @ApiProperty({ example: 'refund_request' }) object: 'refund_request';
  @ApiProperty({ example: 'cr_5f6b1c2d3e4f40a1b2c3d4e5f6a7b8c9' }) id: string;
  @ApiProperty({ enum: ['ios_store'] }) rail: 'ios_store';
  @ApiProperty({ description: 'The original transaction id of the subscription or purchase' }) subscriptionId: string;
  @ApiProperty({ type: String, nullable: true, description: 'The transaction the customer asked to refund' }) transactionId: string | null;
  @ApiProperty({ example: 'cdcust_3f9a0c1d2e4b' }) serviceCustomerId: string;
  @ApiProperty({ description: 'When the store asked (Unix seconds)' }) receivedAt: number;
  @ApiProperty({ description: 'The answer must be sent before this (receivedAt + 12 h, Unix seconds)' }) deadline: number;
  @ApiProperty({ enum: REFUND_REQUEST_STATES }) state: RefundRequestState;
  @ApiProperty({ type: RefundRequestAnswerView, nullable: true, description: 'What was sent (null until sent)' }) answer: RefundRequestAnswer | null;
}

export class RefundRequestList {
  @ApiProperty({ example: 'list' }) object: 'list';
  @ApiProperty({ type: [RefundRequestView], description: 'Newest first; at most 100' }) data: RefundRequestView[];
}
