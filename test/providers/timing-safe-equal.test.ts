// Constant-time compare: equal bytes, different bytes, and a length mismatch that must
// answer false instead of throwing like crypto.timingSafeEqual does.

import { describe, expect, it } from 'vitest';
import { timingSafeEqual } from '../../src/providers/timing-safe-equal.js';

describe('timingSafeEqual', () => {
  it('is true for the same bytes and false for different bytes of the same length', () => {
    expect(timingSafeEqual(Buffer.from('abc'), Buffer.from('abc'))).toBe(true);
    expect(timingSafeEqual(Buffer.from('abc'), Buffer.from('abd'))).toBe(false);
    expect(timingSafeEqual(new Uint8Array(0), new Uint8Array(0))).toBe(true);
  });

  it('answers false for a length mismatch instead of throwing', () => {
    expect(() => timingSafeEqual(Buffer.alloc(32), Buffer.alloc(31))).not.toThrow();
    expect(timingSafeEqual(Buffer.alloc(32), Buffer.alloc(31))).toBe(false);
    expect(timingSafeEqual(Buffer.alloc(0), Buffer.alloc(1))).toBe(false);
  });
});
