import { ApiProperty } from '@nestjs/swagger';
import { IsNotEmpty, IsString, Matches, MaxLength } from 'class-validator';
import { ANONYMOUS_ID_PATTERN } from '#identity';
import { ReadMetaView, SurfaceCoverageView } from '../read-envelope.js';

export class HubspotArrivalDto {
  @ApiProperty({ description: "The browser's anonymous id", example: 'anon_4f1c…' })
  @Matches(ANONYMOUS_ID_PATTERN, { message: 'anonymousId must be an anonymous id as the web client mints it' })
  @IsNotEmpty({ message: 'anonymousId is required' })
  @IsString({ message: 'anonymousId must be a string' })
  anonymousId: string;

  @ApiProperty({ description: 'The `cd_ref` tag of the landing URL (recorded as the first-touch source)', example: 'hs_7731' })
  @MaxLength(256, { message: 'ref must be at most 256 characters' })
  @IsNotEmpty({ message: 'ref is required' })
  @IsString({ message: 'ref must be a string' })
  ref: string;
}

export class ArrivalAcceptedView {
  @ApiProperty({ example: 'arrival' }) object: string;
}

export class SourceSignupsView {
  @ApiProperty({ description: "A campaign arrival's ref, else the utm_source or referrer host of the first anonymous page view, else direct" })
  source: string;
  @ApiProperty() signups: number;
}
export class AcquisitionData {
  @ApiProperty({ type: [SourceSignupsView] }) sources: SourceSignupsView[];
  @ApiProperty({
    type: SurfaceCoverageView,
    description: "meta.coverage.analytics repeated: whether first touches are measured (the CLI's analytics command reads it here)",
  })
  coverage: SurfaceCoverageView;
}
export class AcquisitionEnvelope {
  @ApiProperty({ example: 'acquisition' }) object: string;
  @ApiProperty({ type: AcquisitionData }) data: AcquisitionData;
  @ApiProperty({ type: ReadMetaView }) meta: ReadMetaView;
}
