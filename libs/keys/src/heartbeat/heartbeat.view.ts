import { ApiProperty } from '@nestjs/swagger';

export class HeartbeatView {
  @ApiProperty({ example: 'heartbeat' }) object: 'heartbeat';
  @ApiProperty() ok: boolean;
  @ApiProperty() projectId: string;
  @ApiProperty() appId: string;
  @ApiProperty({ enum: ['ios', 'android', 'web'] }) platform: string;
  @ApiProperty({ enum: ['sandbox', 'production'] }) env: string;
  @ApiProperty({ description: 'Unix ms, for clock-skew detection' }) serverTime: number;
}
