import { ApiProperty } from '@nestjs/swagger';
import { PURCHASE_RAILS } from '#entitlements';

/** Response shapes of the console's rails page. */
export class RailNotificationEntryView {
  @ApiProperty({ example: 'rail_notification' }) object: 'rail_notification';
  @ApiProperty({ description: "The rail's notification id (notificationUUID, evt_…, Pub/Sub messageId)" }) id: string;
  @ApiProperty({ description: 'Unix seconds' }) receivedAt: number;
  @ApiProperty({ example: 'DID_RENEW', description: "The rail's type (iOS: notificationType, card: event type, Android: notification type)" }) type: string;
  @ApiProperty({ enum: ['applied', 'no_op', 'rejected'] }) decision: string;
  @ApiProperty({ type: String, nullable: true, description: 'The subscription id the decision named (original transaction id, sub_…, purchase token)' })
  railId: string | null;
  @ApiProperty({ type: String, nullable: true }) customerId: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'GET /v1/server/audit/{eventId}' }) auditEventId: string | null;
}

export class RailNotificationList {
  @ApiProperty({ example: 'list' }) object: 'list';
  @ApiProperty({ type: [RailNotificationEntryView] }) data: RailNotificationEntryView[];
  @ApiProperty({ description: 'Older notifications remain (pass the last id as before)' }) hasMore: boolean;
  @ApiProperty({ enum: ['sandbox', 'production'] }) env: string;
}

export class RailSecretsView {
  @ApiProperty({ type: Boolean, nullable: true, description: 'Webhook verification secret configured (null: this rail needs none)' }) webhook: boolean | null;
  @ApiProperty({ type: Boolean, nullable: true, description: 'Store API credentials configured (null: this rail needs none)' }) read: boolean | null;
}

export class RailConnectionView {
  @ApiProperty({ example: 'rail_connection_test' }) object: 'rail_connection_test';
  @ApiProperty({ enum: PURCHASE_RAILS }) rail: string;
  @ApiProperty({ enum: ['sandbox', 'production'], description: 'The environment the test was asked from' }) env: string;
  @ApiProperty({ description: 'Whether the store accepted the credentials at the last test' }) ok: boolean;
  @ApiProperty({ description: 'What the test read, or why it failed (never a credential)' }) message: string;
  @ApiProperty({ description: 'Unix seconds of the last test' }) checkedAt: number;
  @ApiProperty({ type: Number, nullable: true, description: 'Unix seconds of the last test the store accepted; null: never' }) lastWorkedAt: number | null;
}

export class RailPanelView {
  @ApiProperty({ enum: PURCHASE_RAILS }) rail: string;
  @ApiProperty({ description: 'Settings saved with the PUT route of this rail' }) configured: boolean;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'What the PUT route of this rail set (never secrets)' }) settings: Record<
    string,
    unknown
  >;
  @ApiProperty({ type: RailSecretsView }) secrets: RailSecretsView;
  @ApiProperty({ type: RailConnectionView, nullable: true, description: 'The last test connection of the rail; null: never tested' })
  connection: RailConnectionView | null;
  @ApiProperty({ description: "The URL to paste into the store's console (built from the request's scheme and host)" }) webhookUrl: string;
  @ApiProperty({ type: [RailNotificationEntryView], description: 'The latest 20 notifications of the environment, newest first' })
  notifications: RailNotificationEntryView[];
  @ApiProperty() notificationsHasMore: boolean;
}
