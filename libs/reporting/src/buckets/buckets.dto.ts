import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ReadMetaView } from '../read-envelope.js';

/** Counts of one label, hour, slot or actor: read, write, delete (other units are ignored). */
class UnitCountsDoc {
  @ApiPropertyOptional({ minimum: 0 }) read?: number;
  @ApiPropertyOptional({ minimum: 0 }) write?: number;
  @ApiPropertyOptional({ minimum: 0 }) delete?: number;
}

/** The value schema of every map of a report. */
const UNIT_COUNTS_SCHEMA = {
  type: 'object' as const,
  properties: { read: { type: 'integer', minimum: 0 }, write: { type: 'integer', minimum: 0 }, delete: { type: 'integer', minimum: 0 } },
  additionalProperties: { type: 'number' },
};

/** The bucket reporter's body (validated by hand: its maps are keyed by the caller's labels). */
export class BucketReportBodyDoc {
  @ApiProperty({ example: '2026-06-19', description: 'UTC day' }) date: string;
  @ApiProperty({ type: 'object', additionalProperties: UNIT_COUNTS_SCHEMA, description: 'label → counts (at most 1,000 labels)' })
  byLabel: Record<string, UnitCountsDoc>;
  @ApiPropertyOptional({ type: 'object', additionalProperties: UNIT_COUNTS_SCHEMA, description: 'UTC hour HH → counts' }) byHour?: Record<
    string,
    UnitCountsDoc
  >;
  @ApiPropertyOptional({ type: 'object', additionalProperties: UNIT_COUNTS_SCHEMA, description: 'UTC 5-minute slot HHMM → counts' })
  byMinute?: Record<string, UnitCountsDoc>;
  @ApiPropertyOptional({ type: 'object', additionalProperties: UNIT_COUNTS_SCHEMA, description: 'actor (developer user id; `anonymous`) → counts' })
  byActor?: Record<string, UnitCountsDoc>;
  @ApiPropertyOptional({ type: 'object', additionalProperties: UNIT_COUNTS_SCHEMA, description: 'actor␟label → counts' })
  byActorLabel?: Record<string, UnitCountsDoc>;
}
export { UnitCountsDoc };

export class BucketReportAcceptedView {
  @ApiProperty({ example: 'bucket_report' }) object: string;
  @ApiProperty({ example: '2026-06-19' }) date: string;
}

export class OperationReadsView {
  @ApiProperty() label: string;
  @ApiProperty() reads: number;
}
export class ReadCostData {
  @ApiProperty({ type: Number, nullable: true }) reads: number | null;
  @ApiProperty({ type: Number, nullable: true }) writes: number | null;
  @ApiProperty({ type: Number, nullable: true }) deletes: number | null;
  @ApiProperty({ type: Number, nullable: true, description: 'Reads attributed to identified actors' }) perUserReads: number | null;
  @ApiProperty({ type: Number, nullable: true, description: 'Reads attributed to no actor (anonymous, or no byActor sent)' }) overheadReads: number | null;
  @ApiProperty({ type: Number, nullable: true }) attributedActors: number | null;
  @ApiProperty({ type: [OperationReadsView], nullable: true }) byOperation: OperationReadsView[] | null;
}
export class ReadCostEnvelope {
  @ApiProperty({ example: 'read_cost' }) object: string;
  @ApiProperty({ type: ReadCostData }) data: ReadCostData;
  @ApiProperty({ type: ReadMetaView }) meta: ReadMetaView;
}
