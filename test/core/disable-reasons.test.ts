// How the portal shows a disable to the tenant: the operator's reason only as the provider's.

import { describe, expect, it } from 'vitest';
import { GONE_REASON, OPERATOR_REASON_FOR_TENANT, endpointForTenant, streakReason } from '../../src/core/disable-reasons.js';

describe('endpointForTenant', () => {
  it("shows a tenant the operator's reason only as the provider's, and their own or their deliveries' as it is", () => {
    expect(endpointForTenant({ id: '1', disabledBy: 'operator', disabledReason: 'abuse report 77' })).toEqual({ id: '1', disabledBy: 'operator', disabledReason: OPERATOR_REASON_FOR_TENANT });
    const byDeliveries = { id: '2', disabledBy: 'deliveries' as const, disabledReason: GONE_REASON };
    expect(endpointForTenant(byDeliveries)).toBe(byDeliveries);
    const enabled = { id: '3', disabledBy: null, disabledReason: null };
    expect(endpointForTenant(enabled)).toBe(enabled);
    expect(streakReason(Date.UTC(2026, 11, 1))).toBe('failing without a success since 2026-12-01T00:00:00.000Z');
  });
});
