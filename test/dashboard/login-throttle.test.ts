// The login throttle alone, on a pinned clock: 10 wrong tokens per address per minute,
// then refusals until the minute is over; addresses apart; memory bounded.

import { describe, expect, it } from 'vitest';
import { clientKeyOf, LoginThrottle } from '../../src/dashboard/login-throttle.js';

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
    // A new window counts from its first failure: 9 more are allowed, the 10th closes it.
    for (let i = 0; i < 9; i++) throttle.fail('10.0.0.1', 61_000);
    expect(refusal(throttle, '10.0.0.1', 61_001)).toBeNull();
    throttle.fail('10.0.0.1', 61_002);
    expect(refusal(throttle, '10.0.0.1', 61_003)).toMatchObject({ retryAfterMs: 59_997 });
  });

  it('counts an IPv6 client by its /64, and an IPv4-mapped one as its IPv4 address', () => {
    expect(clientKeyOf('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(clientKeyOf('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(clientKeyOf('192.0.2.7')).toBe('192.0.2.7');
    expect(clientKeyOf('unknown')).toBe('unknown');
    const throttle = new LoginThrottle({ maxFailures: 2 });
    throttle.fail(clientKeyOf('2001:db8:1:2::1'), 0);
    throttle.fail(clientKeyOf('2001:db8:1:2:ffff::9'), 0);
    expect(refusal(throttle, clientKeyOf('2001:db8:1:2:1234::5'), 1)).not.toBeNull();
    expect(refusal(throttle, clientKeyOf('2001:db8:1:3::1'), 1)).toBeNull();
  });

  it('remembers at most maxAddresses, forgetting the oldest first', () => {
    const throttle = new LoginThrottle({ maxFailures: 1, maxAddresses: 3 });
    for (const [i, address] of ['a', 'b', 'c', 'd'].entries()) throttle.fail(address, i);
    expect(refusal(throttle, 'a', 10)).toBeNull();
    for (const address of ['b', 'c', 'd']) expect(refusal(throttle, address, 10)).not.toBeNull();
  });
});
