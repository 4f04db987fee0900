import { ApiProperty } from '@nestjs/swagger';

export class SdkConfigView {
  @ApiProperty({ example: '0.3.0', description: 'Hard floor. Older clients should refuse to run.' }) minVersion: string;
  @ApiProperty({ type: [String], example: ['0.9.x'] }) deprecatedVersions: string[];
}

export class VerifierConfigView {
  @ApiProperty({ type: Boolean, nullable: true, description: 'Tri-state; null means the client default' }) logVerifierResults: boolean | null;
  @ApiProperty({ type: Boolean, nullable: true }) verifyContractsAtBoot: boolean | null;
}

/** The SDK drops error events whose message matches one of `patterns` before sending them. */
export class ErrorNoiseDenyListView {
  @ApiProperty({ example: 1, minimum: 1, description: 'Bumped when the patterns change' }) version: number;
  @ApiProperty({ type: [String], example: ['ResizeObserver loop'] }) patterns: string[];
}

export class AppConfigView {
  @ApiProperty({ example: 'config' }) object: 'config';
  @ApiProperty({ enum: ['sandbox', 'production'] }) env: string;
  @ApiProperty() projectId: string;
  @ApiProperty() appId: string;
  @ApiProperty({ enum: ['ios', 'android', 'web'] }) platform: string;
  @ApiProperty({ type: [String] }) allowedOrigins: string[];
  @ApiProperty({ type: SdkConfigView }) sdk: SdkConfigView;
  @ApiProperty({ type: VerifierConfigView }) verifierConfig: VerifierConfigView;
  @ApiProperty({ type: ErrorNoiseDenyListView, description: 'Versioned drop-at-source patterns' }) errorNoiseDenyList: Record<string, unknown>;
  @ApiProperty({ description: 'Unix ms' }) serverTime: number;
}
