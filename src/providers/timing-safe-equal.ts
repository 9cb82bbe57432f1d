// Constant-time comparison of a received signature with an expected one. Lengths are
// compared first because node's crypto.timingSafeEqual throws on a length mismatch, and a
// short or long signature from a caller must be a plain "no", never an exception.

import { timingSafeEqual as cryptoTimingSafeEqual } from 'node:crypto';

/**
 * True when `a` and `b` hold the same bytes. Time depends only on the length, which is
 * not secret (every HMAC of one algorithm has the same length).
 */
export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  return cryptoTimingSafeEqual(a, b);
}
