import { ApiProperty } from '@nestjs/swagger';

export class ErrorIssueView {
  @ApiProperty({ example: 'error_issue' }) object: 'error_issue';
  @ApiProperty({ example: '3fa2c19b', description: 'Client fingerprint (8 hex chars)' }) fingerprint: string;
  @ApiProperty({ description: 'Error events delivered for this issue' }) count: number;
  @ApiProperty({ description: 'Unix seconds' }) firstSeenAt: number;
  @ApiProperty({ description: 'Unix seconds' }) lastSeenAt: number;
  @ApiProperty({ example: 'error.unhandled' }) lastEventName: string;
  @ApiProperty({ nullable: true, type: String, enum: ['error', 'warning', 'info'] }) lastLevel: string | null;
}

export class ErrorIssueList {
  @ApiProperty({ example: 'list' }) object: 'list';
  @ApiProperty({ type: [ErrorIssueView] }) data: ErrorIssueView[];
  @ApiProperty({ enum: ['sandbox', 'production'] }) env: string;
}

export class AffectedCustomerView {
  @ApiProperty({ example: 'cdcust_…' }) serviceCustomerId: string;
  @ApiProperty({ example: 'cdcust_…', description: 'The same value as serviceCustomerId (the public clients read this name)' }) crossdeckCustomerId: string;
  @ApiProperty() count: number;
  @ApiProperty({ description: 'Unix seconds' }) lastSeenAt: number;
}

export class AffectedCustomerList {
  @ApiProperty({ example: 'list' }) object: 'list';
  @ApiProperty() fingerprint: string;
  @ApiProperty({ type: [AffectedCustomerView] }) data: AffectedCustomerView[];
  @ApiProperty({ enum: ['sandbox', 'production'] }) env: string;
}

export class OriginalFrameView {
  @ApiProperty({ example: 'src/checkout.ts', description: 'Original source file, as the map names it (sourceRoot applied).' }) source: string;
  @ApiProperty({ description: '1-based' }) line: number;
  @ApiProperty({ description: '1-based' }) column: number;
  @ApiProperty({ type: String, nullable: true, description: 'Original identifier at that position, when the map names it.' }) name: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'The original source line, when the map embeds sourcesContent (at most 200 characters).' })
  contextLine: string | null;
}

export class ErrorFrameView {
  @ApiProperty({ required: false, type: String }) function?: string;
  @ApiProperty({ required: false, type: String, example: 'https://app.example.com/static/main.js' }) filename?: string;
  @ApiProperty({ required: false, type: Number, description: '1-based' }) lineno?: number;
  @ApiProperty({ required: false, type: Number, description: '1-based' }) colno?: number;
  @ApiProperty({ required: false, type: Boolean }) in_app?: boolean;
  @ApiProperty({
    required: false,
    type: OriginalFrameView,
    description: "Present when a source map of the event's release resolves the frame; other frames are returned as sent.",
  })
  original?: OriginalFrameView;
}

export class ErrorEventView {
  @ApiProperty() eventId: string;
  @ApiProperty({ example: 'error.unhandled' }) name: string;
  @ApiProperty({ description: 'Unix milliseconds (the event time)' }) timestamp: number;
  @ApiProperty({ nullable: true, type: String, enum: ['error', 'warning', 'info'] }) level: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'properties.message' }) message: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'properties.errorType, else properties.type' }) errorType: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'properties.release, else context.appVersion' }) release: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'properties.stack, the raw string as sent' }) stack: string | null;
  @ApiProperty({ type: [ErrorFrameView], description: 'properties.frames as sent, each with `original` when a source map resolves it' })
  frames: ErrorFrameView[];
  @ApiProperty({ nullable: true, type: 'object', additionalProperties: { type: 'string' }, description: 'The client context stored with the event' })
  context: Record<string, string> | null;
}

export class ErrorIssueDetailView {
  @ApiProperty({ example: 'error_issue' }) object: 'error_issue';
  @ApiProperty({ example: '3fa2c19b' }) fingerprint: string;
  @ApiProperty() count: number;
  @ApiProperty({ description: 'Unix seconds' }) firstSeenAt: number;
  @ApiProperty({ description: 'Unix seconds' }) lastSeenAt: number;
  @ApiProperty() lastEventName: string;
  @ApiProperty({ nullable: true, type: String, enum: ['error', 'warning', 'info'] }) lastLevel: string | null;
  @ApiProperty({ type: ErrorEventView, nullable: true, description: 'Null once retention has dropped every event of the issue.' })
  latestEvent: ErrorEventView | null;
  @ApiProperty({ enum: ['sandbox', 'production'] }) env: string;
}
