import { ApiProperty } from '@nestjs/swagger';
import { EntitlementList } from '#entitlements';

/** One rail id read by a refresh. */
export class RailRefreshView {
  @ApiProperty({ enum: ['ios_store', 'card_payments', 'android_store'] }) rail: string;
  @ApiProperty({
    description: "The rail's customer or subscription id read: cus_… (or sub_…), an original transaction id, a purchase token",
    example: 'cus_Q2w3e4r5t6',
  })
  id: string;
  @ApiProperty({
    enum: ['applied', 'no_change', 'no_subscription', 'unavailable'],
    description:
      'applied: the read changed the stored state; no_change: it matched; no_subscription: the rail holds none for the id; unavailable: the rail could not be read (the stored state governs)',
  })
  decision: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Audit entry written when the read changed something (GET /v1/server/audit/{eventId})',
    example: 'rail_evt_k3j2h1g0f9e8d7c6b5a4z3y2',
  })
  auditEventId: string | null;
}

/** 200 of refresh: the customer's entitlements after the reads (the entitlements list envelope) and what each read did. */
export class CustomerRefreshView extends EntitlementList {
  @ApiProperty({ type: [RailRefreshView], description: 'Every rail id linked to the customer, in rail order' })
  refreshed: RailRefreshView[];
}
