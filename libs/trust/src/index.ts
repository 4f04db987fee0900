import { CreateDeviceBindings1790000000350 } from './migrations/1790000000350-create-device-bindings.migration.js';
import { CustomerScopeForeignKey1790000000921 } from './migrations/1790000000921-customer-scope-foreign-key.migration.js';
import { TrustGate1790000002100 } from './migrations/1790000002100-trust-gate.migration.js';
import { TrustSettingsVersion1790000002510 } from './migrations/1790000002510-trust-settings-version.migration.js';

export { TrustModule } from './trust.module.js';
export { trustTier, TRUSTED_DEVICE_WINDOW_MS, type TrustDecision, type TrustEvidence, type RecommendedAction, type TrustStatus } from './domain/trust-tier.js';

/** Migrations of the trust context, in order. */
export const TRUST_MIGRATIONS = [
  CreateDeviceBindings1790000000350,
  CustomerScopeForeignKey1790000000921,
  TrustGate1790000002100,
  TrustSettingsVersion1790000002510,
];
