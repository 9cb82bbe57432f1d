// The login throttle alone, on a pinned clock: 10 wrong tokens per address per minute,
// then refusals until the minute is over; addresses apart; memory bounded.

import { describe, expect, it } from 'vitest';
import { LoginThrottle } from '../../src/dashboard/login-throttle.js';

function refusal(throttle: LoginThrottle, address: string, nowMs: number): unknown {
  try {
    throttle.check(address, nowMs);
    return null;
  } catch (error) {
    return error;
  }
}

describe('LoginThrottle', () => {
  it('refuses an address after 10 wrong tokens in a minute until the minute is over, others not', () => {
    const throttle = new LoginThrottle();
    for (let i = 0; i < 10; i++) {
      expect(refusal(throttle, '10.0.0.1', 1_000 + i)).toBeNull();
      throttle.fail('10.0.0.1', 1_000 + i);
    }
    expect(refusal(throttle, '10.0.0.1', 31_000)).toMatchObject({ code: 'MR_ERR_LOGIN_THROTTLED', retryAfterMs: 30_000 });
    expect(refusal(throttle, '10.0.0.2', 31_000)).toBeNull();
    expect(refusal(throttle, '10.0.0.1', 61_000)).toBeNull();
    // A new window counts from its first failure.
    throttle.fail('10.0.0.1', 61_000);
    expect(refusal(throttle, '10.0.0.1', 61_001)).toBeNull();
  });

  it('remembers at most maxAddresses, forgetting the oldest first', () => {
    const throttle = new LoginThrottle({ maxFailures: 1, maxAddresses: 3 });
    for (const [i, address] of ['a', 'b', 'c', 'd'].entries()) throttle.fail(address, i);
    expect(refusal(throttle, 'a', 10)).toBeNull();
    for (const address of ['b', 'c', 'd']) expect(refusal(throttle, address, 10)).not.toBeNull();
  });
});
