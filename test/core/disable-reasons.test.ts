// Who a disable reason says disabled an endpoint: the portal lets a tenant enable again
// only what they or their deliveries disabled.

import { describe, expect, it } from 'vitest';
import { GONE_REASON, OPERATOR_REASON_FOR_TENANT, PORTAL_REASON, disabledBy, endpointForTenant, streakReason } from '../../src/core/disable-reasons.js';

const disabled = (reason: string | null) => ({ enabled: false, disabledReason: reason });

describe('disabledBy', () => {
  it('reads the reasons Mailroom writes, and takes every other reason for the operator', () => {
    expect(disabledBy({ enabled: true, disabledReason: null })).toBeNull();
    expect(disabledBy(disabled(PORTAL_REASON))).toBe('tenant');
    expect(disabledBy(disabled(GONE_REASON))).toBe('deliveries');
    expect(disabledBy(disabled(streakReason(Date.UTC(2026, 11, 1))))).toBe('deliveries');
    expect(disabledBy(disabled('failing without a success since whenever'))).toBe('operator');
    expect(disabledBy(disabled('disabled by hand'))).toBe('operator');
    expect(disabledBy(disabled(null))).toBe('operator');
  });

  it("shows a tenant the operator's reason only as the provider's", () => {
    expect(endpointForTenant({ id: '1', ...disabled('abuse report 77') })).toEqual({ id: '1', ...disabled(OPERATOR_REASON_FOR_TENANT) });
    const byDeliveries = { id: '2', ...disabled(GONE_REASON) };
    expect(endpointForTenant(byDeliveries)).toBe(byDeliveries);
  });
});
