import { ApiProperty } from '@nestjs/swagger';

/** The answer to an inbound store notification (success is 200, docs/rails.md "What every webhook answers"). */
export class RailNotificationView {
  @ApiProperty({ example: 'rail_notification' }) object: 'rail_notification';
  @ApiProperty({ enum: ['ios_store', 'card_payments', 'android_store'] }) rail: string;
  @ApiProperty({ example: 'evt_1PqR…', description: "The rail's own id: iOS notificationUUID, card event id, Pub/Sub messageId" }) notificationId: string;
  @ApiProperty({ enum: ['sandbox', 'production'] }) env: string;
  @ApiProperty({ enum: ['applied', 'no_op', 'rejected'] }) decision: string;
  @ApiProperty({ description: 'true when the notification was processed before; the first answer is returned' }) duplicate: boolean;
  @ApiProperty({ type: String, nullable: true, example: 'cdcust_abc' }) serviceCustomerId: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'cdcust_abc', description: 'The same value as serviceCustomerId (the public clients read this name)' })
  crossdeckCustomerId: string | null;
  @ApiProperty({ example: 'rail_evt_k3j2h1g0f9e8d7c6b5a4z3y2', description: 'GET /v1/server/audit/{eventId} with a secret key of env' }) auditEventId: string;
}
